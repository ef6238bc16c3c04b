package player

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

// CSRFHeader carries the page's CSRF token on every state-changing request.
const CSRFHeader = "X-Ansight-CSRF"

// contentSecurityPolicy allows nothing but this origin: no inline script or style, no
// third party, no framing. Images may also be blob: URLs the page makes itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP checks every request (Host, token or cookie, CSRF) before routing it.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")

	// DNS rebinding: a page of another site whose name resolves to 127.0.0.1 would send
	// its own name as Host.
	if !loopbackHost(r.Host) {
		p.refuse(w, r, http.StatusForbidden, "forbidden_host", "the player answers only to a loopback host name (localhost, 127.0.0.1, [::1])")
		return
	}
	// The refusal page's style and icon: public files of the page, nothing else.
	if r.Method == http.MethodGet && publicAssets[r.URL.Path] {
		p.mux.ServeHTTP(w, r)
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		if !p.validToken(tok) {
			p.refuse(w, r, http.StatusUnauthorized, "unauthorized", "This address's access token is not (or no longer) the player's: "+
				"the host was restarted with a new one, or it was renewed.")
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: cookieName(r.Host), Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		})
		// Take the token out of the address bar and the history once the cookie is set.
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
	} else if c, err := r.Cookie(cookieName(r.Host)); err != nil {
		p.refuse(w, r, http.StatusUnauthorized, "unauthorized", "The player opens with the address the host printed, which carries an access token (?token=…).")
		return
	} else if !p.validToken(c.Value) {
		// A tab opened before the host restarted (or the token was renewed).
		p.refuse(w, r, http.StatusUnauthorized, "token_expired", "This page's access ended: the host was restarted with a new access token, or it was renewed.")
		return
	}
	if !safeMethod(r.Method) {
		if !p.validCSRF(r) {
			p.refuse(w, r, http.StatusForbidden, "csrf", "missing or wrong CSRF token: reload the page")
			return
		}
	}
	p.mux.ServeHTTP(w, r)
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func (p *Player) validToken(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(p.keys.Load().token)) == 1
}

// validCSRF wants the page's token in CSRFHeader and, when the browser says where the
// request comes from, this very origin.
func (p *Player) validCSRF(r *http.Request) bool {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(p.keys.Load().csrf)) != 1 {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// loopbackHost reports whether a Host header names this machine by a loopback name:
// localhost, an address in 127.0.0.0/8 or ::1, with or without a port.
func loopbackHost(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// cookieName differs per port: cookies ignore ports, and two players on one machine must
// not overwrite each other's cookie.
func cookieName(hostport string) string {
	_, port, err := net.SplitHostPort(hostport)
	if err != nil || port == "" {
		port = "80"
	}
	return "ansight_player_" + port
}

// publicAssets are served without the token: the refusal page uses them.
var publicAssets = map[string]bool{"/assets/style.css": true, "/assets/icon.svg": true}

// getIn says how to get (back) into the player: the commands that print or open its URL.
const getIn = "Run 'ansight player open' on this machine to open the player again, or 'ansight player url' to print its address."

// refuse answers a refused request: JSON for the API, a page for a browser. Both say how
// to get in.
func (p *Player) refuse(w http.ResponseWriter, r *http.Request, status int, code wire.Code, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") || r.Method != http.MethodGet {
		if status == http.StatusUnauthorized {
			msg += " " + getIn
		}
		writeError(w, status, code, msg)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = refusedPage.Execute(w, struct {
		Status, Message string
		Unauthorized    bool
	}{http.StatusText(status), msg, status == http.StatusUnauthorized})
}
