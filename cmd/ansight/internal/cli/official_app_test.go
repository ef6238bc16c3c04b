package cli

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/pairing"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// cmdOfficialApp plays an app built with the official .NET SDK against the resident host
// of $ANSIGHT_STATE_DIR, message for message: local enrollment over UDP, the upgrade with
// the token in the query, session.open, then a crash.handoff of its previous process's
// report (with a native trace) and an annotation.submit followed by the bundle's ASFT
// frames, and session.complete. Between them it streams what the official SDKs stream
// besides: its profile, app state and properties, every telemetry message type in its
// exact shape, and ASJP live frames. It sets $OFFICIAL to the session id.
func cmdOfficialApp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: officialapp")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := hostapi.NewClient(filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName))
	st, err := b.Status(ctx)
	ts.Check(err)

	const appID = "com.example.official"
	psid := pairing.NewToken(16)
	req := `{"type":"ENROLLMENT_CONNECT","ver":2,"requestId":"` + pairing.NewToken(16) + `","enrollmentMode":"local","inviteId":"local:` + appID +
		`","appId":"` + appID + `","deviceId":"Zm9vYmFyYmF6cXV4cXV1eA","deviceName":"Pixel 8 (emulator)","accessToken":"` + pairing.NewToken(32) +
		`","processSessionId":"` + psid + `"}`
	udp, err := net.Dial("udp", st.Discovery)
	ts.Check(err)
	defer udp.Close()
	_, err = udp.Write([]byte(req))
	ts.Check(err)
	udp.SetReadDeadline(time.Time{})
	buf := make([]byte, 64<<10)
	n, err := udp.Read(buf)
	ts.Check(err)
	res, err := pairing.ParseEnrollmentResult(buf[:n])
	ts.Check(err)
	if !res.Accepted {
		ts.Fatalf("officialapp: enrollment refused: %s", res.Reason)
	}
	_, port, _ := net.SplitHostPort(st.WebSocket)
	conn, err := transport.Dial(ctx, "ws://127.0.0.1:"+port+"/ws?token="+res.WebSocketToken, transport.DialOptions{})
	ts.Check(err)
	defer conn.Close(transport.StatusNormalClosure, "Client session closed.")
	ask := func(id, msg string) {
		ts.Check(conn.Write(ctx, transport.MessageText, []byte(msg)))
		for {
			_, data, err := conn.Read(ctx)
			ts.Check(err)
			if resp, err := session.ParseControl(data); err == nil && resp.ReplyTo == id {
				if !resp.Success {
					ts.Fatalf("officialapp: %s refused: %s", id, resp.Message)
				}
				return
			}
			// tool.query and the like: this app answers nothing else.
		}
	}
	ask("client.open", `{"type":"CONTROL_REQ","id":"client.open","replyTo":null,"action":"session.open","payload":{"clientName":"Pixel 8","configId":"local:`+appID+`","appId":"`+appID+`","openedAtUtc":"2026-09-04T02:00:05.0000000+00:00"},"success":true,"message":null}`)
	ask("client.profile", `{"type":"CONTROL_REQ","id":"client.profile","replyTo":null,"action":"device.profile","payload":{"type":"DeviceAppProfile","schema":"ansight.device-app-profile.v1","sentAt":1788487205000,"reasonCode":1,"profileSeq":1,"sdk":{"name":"Ansight.Core","packageId":"Ansight.Core","version":"1.4.0","language":"csharp"},"device":{"model":"Pixel 8","osName":"Android","osVersion":"15","apiLevel":35},"app":{"appId":"`+appID+`","versionCode":42},"sessionJpegCaptureControlVersion":1},"success":true,"message":null}`)
	ask("client.state", `{"type":"CONTROL_REQ","id":"client.state","replyTo":null,"action":"app.state","payload":{"state":"Foreground","changedAtUtc":"2026-09-04T02:00:06Z"},"success":true,"message":null}`)
	ask("client.props", `{"type":"CONTROL_REQ","id":"client.props","action":"session.properties","payload":{"schema":"ansight.session-properties.v1","customProperties":{"build":{"flavor":"debug"}},"updatedAtUtc":"2026-09-04T02:00:07Z","platform":"android"},"success":true}`)

	// Everything else an official SDK streams, in its exact shapes (the recording
	// package's sample of each message type; CLIENT_DONE would end the session), then
	// live screen frames.
	telemetry, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "recording", "testdata", "official-telemetry.jsonl"))
	ts.Check(err)
	for line := range strings.SplitSeq(strings.TrimSpace(string(telemetry)), "\n") {
		if !strings.Contains(line, `"CLIENT_DONE"`) {
			ts.Check(conn.Write(ctx, transport.MessageText, []byte(line)))
		}
	}
	var img bytes.Buffer
	ts.Check(jpeg.Encode(&img, image.NewGray(image.Rect(0, 0, 36, 64)), nil))
	for i := range 3 {
		frame, err := wire.AppendASJP(nil, wire.ASJPFrame{Format: wire.ASJPFormatJPEG, Quality: 60, Flags: wire.ASJPFlagKeyboardKnown,
			CapturedAt: time.Date(2026, 9, 4, 2, 0, 10+i, 0, time.UTC), Width: 36, Height: 64, JPEG: img.Bytes()})
		ts.Check(err)
		ts.Check(conn.Write(ctx, transport.MessageBinary, frame))
	}

	const prev = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	ask("client.crash", `{"type":"CONTROL_REQ","id":"client.crash","replyTo":null,"action":"crash.handoff","payload":{"reportId":"recovered-crash",`+
		`"targetProcessSessionId":"`+prev+`","targetSessionId":null,"deliveryProcessSessionId":"`+psid+`","report":{"schema":"ansight.crash.v1",`+
		`"reportId":"recovered-crash","previousProcessSessionId":"`+prev+`","occurredAtUtc":"2026-09-04T02:00:00Z","platform":"android",`+
		`"kind":"native_crash","confidence":"confirmed","candidate":{"message":"SIGSEGV in libgame.so"},"termination":{},"breadcrumbs":[],`+
		`"traceBase64":"dHJhY2U=","hostAcknowledged":false}},"success":true,"message":null}`)

	bundle := []byte("PK\x03\x04 not really a zip, but bytes are bytes")
	transferID := wire.NewTransferID()
	ask("client.note", `{"type":"CONTROL_REQ","id":"client.note","replyTo":null,"action":"annotation.submit","payload":{"schema":"ansight.annotation.submit.v1",`+
		`"clientAnnotationId":"1b4e28ba2fa111d2883f0016d3cca427","capturedAtUtc":"2026-09-04T02:01:00.0000000+00:00","transfer":{"transferId":"`+transferID+`",`+
		`"fileName":"1b4e28ba-2fa1-11d2-883f-0016d3cca427.ansightannotation","mimeType":"application/vnd.ansight.annotation+zip","sizeBytes":`+fmt.Sprint(len(bundle))+
		`,"chunkBytes":65536,"wireProtocol":"ansight.file-transfer.v1"}},"success":true,"message":null}`)
	for _, f := range []wire.Frame{
		{Type: wire.FrameChunk, TransferID: transferID, Payload: bundle},
		{Type: wire.FrameComplete, TransferID: transferID, Sequence: 1, Offset: int64(len(bundle))},
	} {
		frame, err := wire.AppendFrame(nil, f)
		ts.Check(err)
		ts.Check(conn.Write(ctx, transport.MessageBinary, frame))
	}
	// The frames are handled in order before this request.
	ask("client.done", `{"type":"CONTROL_REQ","id":"client.done","replyTo":null,"action":"session.complete","payload":{"reason":"client log stream complete"},"success":true,"message":null}`)

	// The app closes its connection, as the SDKs do after session.complete; the command
	// returns once the host lists the session as disconnected, so that scripts see it so.
	conn.Close(transport.StatusNormalClosure, "Client session closed.")
	waitHost(ts, "the official app's session, disconnected", func(ctx context.Context, c *hostapi.Client) bool {
		list, err := c.Sessions(ctx)
		if err != nil {
			return false
		}
		for _, s := range list.Sessions {
			if s.AppID == appID && s.State == hostapi.StateDisconnected {
				ts.Setenv("OFFICIAL", s.ID)
				return true
			}
		}
		return false
	})
}
