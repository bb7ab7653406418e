package resource

// A SessionStream is the GET stream of a session of a server NewServer
// made, over streamable HTTP before 2026-07-28, as a transport in front
// of go-sdk's handler holds it: one whose flushes it can hold back (see
// AttachSessionStream). Package serve's edge attaches each.
type SessionStream interface {
	// Hold makes the stream's flushes wait until Release: what go-sdk
	// writes meanwhile stays in the response's buffer.
	Hold()
	// Release ends Hold, and flushes the stream if a flush waited.
	Release() error
}

// A SessionWriter is a SessionStream on which the registry writes each
// notifications/resources/updated it sends the session itself, rather
// than through go-sdk's connection, which would encode the same message
// again for each session and write it under its locks: the same bytes,
// for less CPU. A transport attaches one only where the bytes are the
// same: where go-sdk numbers none of the stream's events (no
// StreamableHTTPOptions.EventStore). The registry writes on it only a
// resources/updated whose params are the URI alone, as Changed makes
// them; one a sending middleware added after NewServer changed, and
// anything else the session is sent, go-sdk writes, as on a
// SessionStream. Package serve's edge attaches each stream as one unless
// an EventStore is set.
type SessionWriter interface {
	SessionStream
	// Updated writes notifications/resources/updated of uri into the
	// stream's buffer, as go-sdk writes it: "event: message", then
	// "data: " and the message, with no event ID. It must not write
	// within one of go-sdk's events: the transport orders its writes
	// with go-sdk's. FlushUpdated sends it; an error means the stream
	// ended, and the registry logs the notification as not sent.
	Updated(uri string) error
	// FlushUpdated sends what Updated wrote. (It is not Flush: the
	// stream is most often also the http.ResponseWriter go-sdk writes
	// through, whose Flush returns nothing.)
	FlushUpdated() error
}

// AttachSessionStream tells r that stream is the GET stream of the go-sdk
// session sessionID, of a server r made (Subscribes): when the session
// has fallen behind, and more than one notification waits for it, r
// holds the stream's flushes while go-sdk writes them, and releases it
// after the last, so that they go out in one write rather than one each.
// What go-sdk writes on the stream meanwhile (a notification of its own)
// waits as long. The bytes are go-sdk's, unchanged; a SessionWriter's
// resources/updated r writes itself, the same bytes.
//
// detach forgets the stream, once its response has ended. A run under
// way then still ends with its Release, which must do nothing on a
// stream whose response has ended. Attaching another stream for the same
// session replaces the first. AttachSessionStream panics if stream is
// nil.
func (r *Registry) AttachSessionStream(sessionID string, stream SessionStream) (detach func()) {
	if stream == nil {
		panic("resource: AttachSessionStream with a nil stream")
	}
	return r.delivery.AttachStream(sessionID, stream)
}
