package host

import (
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// handleBinary takes a binary message that is not the tool client's (not ASFT): a live
// screenshot frame (ASJP) goes to Options.Recorder and Options.OnFrame; anything else is
// dropped.
func (s *Server) handleBinary(sess *Session, data []byte) {
	if !wire.IsASJP(data) {
		return
	}
	s.recordMessage(sess, transport.MessageBinary, data)
	if s.opts.OnFrame == nil {
		return
	}
	f, err := wire.ParseASJP(data)
	if err != nil {
		s.log.Debug("host: dropped a malformed live screenshot frame", "session", sess.ID(), "err", err)
		return
	}
	s.opts.OnFrame(sess.ID(), f)
}
