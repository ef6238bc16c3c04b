package player

import (
	"net/http"
	"strings"
	"testing"
)

func TestAccessChecks(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	csrf := tp.csrfToken()
	for _, tc := range []struct {
		name string
		req  req
		want int
	}{
		{"page without token", req{path: "/"}, http.StatusUnauthorized},
		{"api without token", req{path: "/api/sessions"}, http.StatusUnauthorized},
		{"events without token", req{path: "/api/events"}, http.StatusUnauthorized},
		{"asset without token", req{path: "/assets/app.js"}, http.StatusUnauthorized},
		{"the refusal page's style without token", req{path: "/assets/style.css"}, http.StatusOK},
		{"the refusal page's icon without token", req{path: "/assets/icon.svg"}, http.StatusOK},
		{"the style posted without token", req{method: "POST", path: "/assets/style.css"}, http.StatusUnauthorized},
		{"wrong token", req{path: "/?token=nope"}, http.StatusUnauthorized},
		{"wrong token with cookie", req{path: "/api/sessions?token=nope", cookie: true}, http.StatusUnauthorized},
		{"token in the URL", req{path: "/?token=" + testToken}, http.StatusSeeOther},
		{"token for the API", req{path: "/api/sessions?token=" + testToken}, http.StatusOK},
		{"cookie", req{path: "/", cookie: true}, http.StatusOK},
		{"cookie of another port", req{path: "/", cookie: true, host: "127.0.0.1:1"}, http.StatusOK},
		{"localhost", req{path: "/api/sessions", cookie: true, host: "localhost:47231"}, http.StatusOK},
		{"LOCALHOST", req{path: "/api/sessions", cookie: true, host: "LOCALHOST:47231"}, http.StatusOK},
		{"ipv6 loopback", req{path: "/api/sessions", cookie: true, host: "[::1]:47231"}, http.StatusOK},
		{"127.0.0.2", req{path: "/api/sessions", cookie: true, host: "127.0.0.2:47231"}, http.StatusOK},
		{"no port", req{path: "/api/sessions", cookie: true, host: "127.0.0.1"}, http.StatusOK},
		{"rebinding name", req{path: "/api/sessions", cookie: true, host: "attacker.example:47231"}, http.StatusForbidden},
		{"rebinding with token", req{path: "/?token=" + testToken, host: "attacker.example:47231"}, http.StatusForbidden},
		{"name ending in an ip", req{path: "/", cookie: true, host: "127.0.0.1.nip.io:47231"}, http.StatusForbidden},
		{"lan address", req{path: "/", cookie: true, host: "192.168.1.4:47231"}, http.StatusForbidden},
		{"empty host", req{path: "/", cookie: true, host: " "}, http.StatusForbidden},
		{"zoned ipv6", req{path: "/", cookie: true, host: "[::1%25eth0]:47231"}, http.StatusForbidden},
		{"post without csrf", req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, body: `{"toolId":"x"}`}, http.StatusForbidden},
		{"post with a wrong csrf", req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: "00" + csrf[2:], body: `{"toolId":"x"}`}, http.StatusForbidden},
		{"post with the token but no csrf", req{method: "POST", path: "/api/sessions/s-1/call?token=" + testToken, body: `{"toolId":"x"}`}, http.StatusForbidden},
		{"post from another origin", req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: csrf, origin: "http://attacker.example", body: `{"toolId":"x"}`}, http.StatusForbidden},
		{"post cross-site", req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: csrf, fetchSite: "cross-site", body: `{"toolId":"x"}`}, http.StatusForbidden},
		{"post same-origin", req{method: "POST", path: "/api/sessions/s-1/call", cookie: true, csrf: csrf, origin: "http://127.0.0.1:47231", fetchSite: "same-origin", body: `{"toolId":"x"}`}, http.StatusOK},
		{"post without cookie", req{method: "POST", path: "/api/sessions/s-1/call", csrf: csrf, body: `{"toolId":"x"}`}, http.StatusUnauthorized},
		{"delete without csrf", req{method: "DELETE", path: "/api/sessions/s-1", cookie: true}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp.backend.answer = &tpAnswer
			w := tp.do(t, tc.req)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body.String())
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("CSP %q", csp)
			}
			if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v", w.Header())
			}
			if strings.Contains(w.Body.String(), testToken) {
				t.Errorf("the answer contains the token")
			}
			if w.Code == http.StatusUnauthorized && strings.HasPrefix(tc.req.path, "/api/") && !strings.Contains(w.Body.String(), `"code":"unauthorized"`) {
				t.Errorf("API refusal body %s", w.Body)
			}
		})
	}
}

func TestTokenSetsCookieAndLeavesTheAddressBar(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	w := tp.do(t, req{path: "/?token=" + testToken + "&x=1"})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/?x=1" {
		t.Fatalf("status %d, location %q", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if c.Name != "ansight_player_47231" || c.Value != testToken || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v", c)
	}
}

func TestPageCarriesCSRF(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	w := tp.do(t, req{path: "/", cookie: true})
	body := w.Body.String()
	if !strings.Contains(body, `<meta name="csrf-token" content="`+tp.csrfToken()+`">`) {
		t.Fatalf("page has no CSRF token:\n%s", body)
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "http://") || strings.Contains(body, "https://") {
		t.Errorf("the page must load nothing inline or from elsewhere:\n%s", body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("cache-control %q", w.Header().Get("Cache-Control"))
	}
	other, err := New(tp.backend, Options{Token: "another"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.csrfToken() == tp.csrfToken() {
		t.Error("the CSRF token does not depend on the access token")
	}
}

func TestRandomToken(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	a, err := New(tp.backend, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(tp.backend, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ta, tb := a.keys.Load().token, b.keys.Load().token
	if len(ta) < 40 || ta == tb {
		t.Errorf("tokens %q %q", ta, tb)
	}
	if u := a.URL("127.0.0.1:47231"); u != "http://127.0.0.1:47231/?token="+ta {
		t.Errorf("URL %q", u)
	}
}

// TestSetToken: a new access token locks out the pages of the old one (cookie and CSRF
// token), which are told how to get in again, and lets the new URL in.
func TestSetToken(t *testing.T) {
	tp := newTestPlayer(t)
	oldCSRF := tp.csrfToken()
	sub := tp.hub.subscribe() // an open page's event stream
	tp.SetToken("renewed-token-0123456789")
	select {
	case <-sub.gone:
	default:
		t.Error("the open pages' streams go on with the old token")
	}
	w := tp.do(t, req{method: "GET", path: "/", cookie: true})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "ansight player url") {
		t.Errorf("old cookie: %d %s", w.Code, w.Body)
	}
	w = tp.do(t, req{method: "GET", path: "/api/sessions", cookie: true})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), `"code":"token_expired"`) {
		t.Errorf("old cookie on the API: %d %s", w.Code, w.Body)
	}
	if tp.csrfToken() == oldCSRF {
		t.Error("the CSRF token did not change with the access token")
	}
	if u := tp.URL("127.0.0.1:1"); !strings.HasSuffix(u, "?token=renewed-token-0123456789") {
		t.Errorf("URL %q", u)
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "nonsense"} {
		if l, err := Listen(addr); err == nil {
			l.Close()
			t.Errorf("Listen(%q) accepted a non-loopback address", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		l, err := Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		l.Close()
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	tp := newTestPlayer(t)
	for _, tc := range []struct {
		path, ctype string
		status      int
	}{
		{"/assets/app.js", "text/javascript", 200},
		{"/assets/style.css", "text/css", 200},
		{"/assets/icon.svg", "image/svg+xml", 200},
		{"/assets/index.html", "", 404},
		{"/assets/nope.js", "", 404},
		{"/assets/..%2fplayer.go", "", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := tp.do(t, req{path: tc.path, cookie: true})
			if w.Code != tc.status || !strings.HasPrefix(w.Header().Get("Content-Type"), tc.ctype) {
				t.Errorf("%s: %d %q", tc.path, w.Code, w.Header().Get("Content-Type"))
			}
		})
	}
}

// TestAssetsStayLocal: no asset refers to another origin (no CDN, works offline).
func TestAssetsStayLocal(t *testing.T) {
	t.Parallel()
	entries, err := webFS.ReadDir("web")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := webFS.ReadFile("web/" + e.Name())
		s := string(b)
		for _, bad := range []string{"http://", "https://", "//cdn", "innerHTML", "eval(", "new Function"} {
			if strings.Contains(s, bad) && !(bad == "http://" && strings.Contains(s, `xmlns="http://www.w3.org/2000/svg"`)) {
				t.Errorf("%s contains %q", e.Name(), bad)
			}
		}
	}
}
