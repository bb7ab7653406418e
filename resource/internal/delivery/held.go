package delivery

// A HeldStream is the GET stream of a go-sdk session over streamable
// HTTP, as a transport in front of go-sdk's handler holds it: one whose
// flushes it can hold back. While a session has notifications waiting,
// send holds its stream's flushes, so that go-sdk's writes of them go
// out together, in one write, when the last has been written (Release).
type HeldStream interface {
	// Hold makes the stream's flushes wait until Release.
	Hold()
	// Release ends Hold, and flushes the stream if a flush waited.
	Release() error
}

// A WritableStream is a HeldStream the delivery may write a session's
// notifications/resources/updated on itself, as go-sdk writes one,
// rather than through go-sdk's connection: its transport offers it when
// go-sdk numbers none of the stream's events (no EventStore). send
// writes on it only what go-sdk would have written byte for byte: a
// resources/updated whose params are the URI alone (queued.plain), to a
// session of a server the registry made, whose sending middleware has
// nothing but go-sdk's own writing after the registry's.
type WritableStream interface {
	HeldStream
	// Updated writes notifications/resources/updated of uri into the
	// stream's buffer, as go-sdk writes it with no event ID;
	// FlushUpdated sends it.
	Updated(uri string) error
	// FlushUpdated sends what Updated wrote.
	FlushUpdated() error
}

// AttachStream tells d that s is the GET stream of the go-sdk session
// named id; detach forgets it, if it is still the session's.
func (d *Delivery[G]) AttachStream(id string, s HeldStream) (detach func()) {
	d.streamsMu.Lock()
	defer d.streamsMu.Unlock()
	if d.streams == nil {
		d.streams = make(map[string]HeldStream)
	}
	d.streams[id] = s
	return func() {
		d.streamsMu.Lock()
		defer d.streamsMu.Unlock()
		if d.streams[id] == s {
			delete(d.streams, id)
		}
	}
}

// heldStream returns the stream attached for the session named id, nil
// if none is.
func (d *Delivery[G]) heldStream(id string) HeldStream {
	if id == "" {
		return nil
	}
	d.streamsMu.Lock()
	defer d.streamsMu.Unlock()
	return d.streams[id]
}
