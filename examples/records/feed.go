package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/subscribe"
)

// changesChannel is the Postgres NOTIFY channel on which the tables'
// trigger reports the changes it sees, in the bus's JSON form (see
// subscribe.Message), and, with -bus postgres, the channel the replicas
// share their own changes on.
const changesChannel = "records_changes"

// reportedSetting is the transaction setting by which this server tells
// the trigger that it reports a write itself (through Registry.Changed,
// which publishes it to the other replicas): the trigger then stays
// silent, so that no replica hears of the change twice.
const reportedSetting = "records.reported"

// triggerSQL creates, or replaces, the function and the per-table triggers
// that report every row change made by anyone (psql, a batch job, another
// service) on changesChannel, unless the writing transaction set
// reportedSetting: an update as the row's URI, an insert or a delete as
// the row's URI and a list change, with the time of the write as "sent"
// (so that a replica's bus lag counts from it).
const triggerSQL = `
CREATE OR REPLACE FUNCTION records_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	row_id bigint;
	uri text;
BEGIN
	IF coalesce(current_setting('` + reportedSetting + `', true), '') = 'on' THEN
		RETURN NULL;
	END IF;
	IF TG_OP = 'DELETE' THEN row_id := OLD.id; ELSE row_id := NEW.id; END IF;
	uri := 'db://' || TG_TABLE_NAME || '/' || row_id;
	PERFORM pg_notify('` + changesChannel + `', json_build_object('sent', clock_timestamp(), 'changes',
		CASE WHEN TG_OP = 'UPDATE' THEN json_build_array(json_build_object('uri', uri))
		ELSE json_build_array(json_build_object('uri', uri), json_build_object('list', true)) END)::text);
	RETURN NULL;
END $$`

// installTriggers installs triggerSQL and a trigger on each table, in tx,
// which holds setupLock (see store.setUp): Postgres refuses concurrent
// replacements of one function.
func installTriggers(ctx context.Context, tx *sql.Tx) error {
	stmts := []string{triggerSQL}
	for _, t := range tables {
		stmts = append(stmts, fmt.Sprintf(
			"CREATE OR REPLACE TRIGGER records_notify AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION records_notify()", t.Name))
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("installing the change trigger: %w", err)
		}
	}
	return nil
}

// openBus returns the bus the registry shares changes on, and a function
// that closes it, for the -bus and -dsn flags:
//
//   - SQLite, no -bus: none (a poller notices other processes' writes).
//   - Postgres, no -bus: a listener of the trigger's changesChannel only;
//     this replica's own changes go nowhere else.
//   - -bus postgres: pgbus on changesChannel, shared by the trigger and
//     the replicas.
//   - -bus nats://HOST:PORT: natsbus for the replicas' changes, and a
//     listener of the trigger's channel for everyone else's.
//
// -bus needs -dsn: replicas share one Postgres database.
func openBus(ctx context.Context, cfg config, logger *slog.Logger) (subscribe.Bus, func(), error) {
	nothing := func() {}
	switch {
	case cfg.bus == "" && cfg.dsn == "":
		return nil, nothing, nil
	case cfg.dsn == "":
		return nil, nil, errors.New("-bus needs -dsn: the replicas share one Postgres database")
	}
	openFeed := func() (*pgbus.Bus, error) {
		return pgbus.Open(ctx, cfg.dsn, &pgbus.Options{Channel: changesChannel, Logger: logger})
	}
	switch {
	case cfg.bus == "":
		feed, err := openFeed()
		if err != nil {
			return nil, nil, err
		}
		return feedBus{feed: feed}, func() { feed.Close() }, nil
	case cfg.bus == "postgres":
		bus, err := openFeed()
		if err != nil {
			return nil, nil, err
		}
		logger.Info("sharing changes through Postgres", "channel", changesChannel)
		return bus, func() { bus.Close() }, nil
	case strings.HasPrefix(cfg.bus, "nats://"):
		nb, err := natsbus.Connect(cfg.bus, &natsbus.Options{Logger: logger})
		if err != nil {
			return nil, nil, err
		}
		feed, err := openFeed()
		if err != nil {
			nb.Close()
			return nil, nil, err
		}
		logger.Info("sharing changes through NATS", "url", cfg.bus, "subject", natsbus.DefaultSubject)
		return feedBus{pub: nb, feed: feed}, func() { nb.Close(); feed.Close() }, nil
	}
	return nil, nil, fmt.Errorf("-bus %q: want nats://HOST:PORT or postgres", cfg.bus)
}

// A feedBus publishes this replica's changes on pub (nowhere if nil) and
// delivers both what the other replicas publish there and what the
// database's trigger reports on feed, one call at a time. Nothing is
// published on feed: the trigger is its only publisher.
type feedBus struct {
	pub, feed subscribe.Bus
}

func (b feedBus) Publish(c subscribe.Change) {
	if b.pub != nil {
		b.pub.Publish(c)
	}
}

func (b feedBus) Listen(deliver func(subscribe.Change)) (stop func(), err error) {
	var mu sync.Mutex
	one := func(c subscribe.Change) {
		mu.Lock()
		defer mu.Unlock()
		deliver(c)
	}
	stopFeed, err := b.feed.Listen(one)
	if err != nil || b.pub == nil {
		return stopFeed, err
	}
	stopPub, err := b.pub.Listen(one)
	if err != nil {
		stopFeed()
		return nil, err
	}
	return func() { stopPub(); stopFeed() }, nil
}
