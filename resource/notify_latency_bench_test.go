package resource_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkNotifyLatency compares, side by side, how long a lone change
// takes to reach the last of 1,000 and of 10,000 subscribed sessions:
// the registry's Changed, with the default subscription window, and
// go-sdk v1.8's own Server.ResourceUpdated, called by the benchmark on the
// same kind of sessions (go-sdk clients over in-memory transports,
// subscribed through resources/subscribe at 2025-11-25 or
// subscriptions/listen at 2026-07-28; see BenchmarkNotify). Before each
// change the benchmark waits, untimed, until nothing has arrived for two
// windows, so that every change is lone. ms/last is the mean time from the
// call to the last session's notification; the ns/op column counts the
// same time, and nothing else.
//
// In stalled=1, a 1,001st session has stopped reading (see
// stallingTransport) before the changes, and the time is to the last of
// the 1,000 others. go-sdk's own ResourceUpdated is not measured there: it
// blocks on the stalled session until it reads again, and then drops the
// notification for the sessions after it once its 10 s deadline has
// passed (TestStalledSessionHoldsUpNoOther).
//
//	go test -run '^$' -bench NotifyLatency -benchtime 5x -count 5 ./resource/
func BenchmarkNotifyLatency(b *testing.B) {
	for _, sessions := range []int{1_000, 10_000} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			name := fmt.Sprintf("sessions=%d/era=%s", sessions, version)
			b.Run(name+"/mcpres", func(b *testing.B) {
				reg, n := newMountedNotifyBench(b, sessions, version)
				n.latency(b, func() {
					if err := reg.Changed(notifyURI); err != nil {
						b.Fatal(err)
					}
				})
			})
			if sessions == 1_000 {
				b.Run(fmt.Sprintf("sessions=%d/stalled=1/era=%s/mcpres", sessions, version), func(b *testing.B) {
					reg, n := newMountedNotifyBench(b, sessions, version)
					n.stallOne(b, version)
					n.latency(b, func() {
						if err := reg.Changed(notifyURI); err != nil {
							b.Fatal(err)
						}
					})
				})
			}
			b.Run(name+"/go-sdk", func(b *testing.B) {
				n := newSDKNotifyBench(b, sessions, version)
				params := &mcp.ResourceUpdatedNotificationParams{URI: notifyURI}
				n.latency(b, func() {
					// ResourceUpdated returns once it has sent to every
					// session; the timer runs until the last has received.
					if err := n.server.ResourceUpdated(context.Background(), params); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// latency times change, made after a quiet spell, until every client has
// received one more notification, and reports the mean as ms/last and the
// median as ms/median.
func (n *notifyBench) latency(b *testing.B, change func()) {
	var times []time.Duration
	for b.Loop() {
		b.StopTimer()
		n.quiet()
		n.target.Store(n.total.Load() + int64(len(n.received)))
		select { // a signal left from before
		case <-n.reached:
		default:
		}
		b.StartTimer()
		start := time.Now()
		change()
		if _, ok := mcptest.Await(n.reached); !ok {
			b.Fatalf("%d of %d notifications within %v", n.total.Load()-(n.target.Load()-int64(len(n.received))), len(n.received), mcptest.WaitTimeout)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	n.quiet()
	if want := n.target.Load(); n.total.Load() != want {
		b.Fatalf("%d notifications, want %d: one per session per change", n.total.Load(), want)
	}
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	slices.Sort(times)
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(times)), "ms/last")
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/median")
}

// quiet returns once no notification has arrived for two subscription
// windows.
func (n *notifyBench) quiet() {
	for last := n.total.Load(); ; {
		// On the real clock, which the benchmark times: a change is lone
		// only once the window the last one opened has ended, and only
		// a quiet spell says no late or duplicate notification is coming.
		time.Sleep(2 * subscribe.DefaultWindow)
		now := n.total.Load()
		if now == last {
			return
		}
		last = now
	}
}

// stallOne connects one more client, of version, through a
// stallingTransport, subscribes it to notifyURI, and once it has received
// a notification (which the other clients receive too), stalls it;
// b.Cleanup releases and closes it. The notifications it receives are not
// counted.
func (n *notifyBench) stallOne(b *testing.B, version string) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := n.server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	stalling := newStallingTransport(ct)
	got := make(chan struct{}, 1)
	client, acked := ackedClient(notifyURI, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case got <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, stalling, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stalling.release()
		cs.Close()
		ss.Wait()
	})
	if err := subscribeAcked(ctx, cs, acked, notifyURI); err != nil {
		b.Fatal(err)
	}
	// One notification, which the others receive too: quiet waits for
	// them before the first change.
	if err := n.notify(); err != nil {
		b.Fatal(err)
	}
	mcptest.Receive(b, got, "notification of the session to stall")
	stalling.stall()
}
