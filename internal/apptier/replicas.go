package apptier

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/headroom-dev/headroom/internal/rotation"
	"github.com/headroom-dev/headroom/internal/target"
)

// The database's read replicas. The target tells each application server
// which replicas exist now (POST /admin/replicas, a list of HOST:PORT); the
// server opens a pool to each with the primary's user, password and
// database, prepares the reads and scans there, and then sends reads and
// scans round-robin over the replicas. Writes never go to a replica.
//
// The request path takes no lock and allocates nothing to choose a
// replica (internal/rotation). A new list replaces the set whole; a
// replica no longer listed is retired after the swap, and its pool is
// closed once the reads that chose it before the swap have finished
// (internal/rotation says why none can start after).

// replica is one read replica an application server reads from.
type replica struct {
	addr string // HOST:PORT, as the target gave it
	db   *sql.DB
	st   *statements // reads and scans only

	// Member counts the reads that chose this replica and have not
	// finished, and marks it once it left the set (internal/rotation).
	rotation.Member
	reads atomic.Uint64 // reads it answered (any outcome but a retry)
}

// replicaDrain bounds how long a replica that left the set keeps its pool
// for the reads still running on it.
var replicaDrain = 30 * time.Second

// query runs a read (scan false) or a scan on the next replica, or on the
// primary's statements st when there is no replica, and writes the rows to
// out; it returns their number. A replica that went away (its server
// stopped, the connection broke) costs the read a second try on the
// primary, not a failure.
func (s *Server) query(ctx context.Context, st *statements, req *request, out *bytes.Buffer, scan bool) (int, error) {
	if r, ok := s.replicas.Pick(); ok {
		// A request that read the primary's statements before a
		// prepare with fewer fields may meet a replica of the new table.
		if req.field < len(r.st.readField) {
			n, err := runQuery(ctx, r.st, req, out, scan)
			r.Release()
			if err == nil || ctx.Err() != nil || !replicaGone(err) {
				r.reads.Add(1)
				return n, err
			}
			out.Reset()
			s.retried.Add(1)
		} else {
			r.Release()
		}
	}
	s.primaryReads.Add(1)
	return runQuery(ctx, st, req, out, scan)
}

// runQuery runs a read or a scan with st's statements.
func runQuery(ctx context.Context, st *statements, req *request, out *bytes.Buffer, scan bool) (int, error) {
	var rows *sql.Rows
	var err error
	switch {
	case scan && req.field >= 0:
		rows, err = st.scanField[req.field].QueryContext(ctx, req.key, req.n)
	case scan:
		rows, err = st.scanAll.QueryContext(ctx, req.key, req.n)
	case req.field >= 0:
		rows, err = st.readField[req.field].QueryContext(ctx, req.key)
	default:
		rows, err = st.readAll.QueryContext(ctx, req.key)
	}
	if err != nil {
		return 0, err
	}
	return writeRows(rows, out)
}

// replicaGone says whether a read failed because its replica is not
// there any more: the connection was refused, broke or was closed, or the
// server is shutting down or not yet accepting connections (SQLSTATE
// class 08, 57P01 to 57P03). A query error (a recovery conflict, a
// timeout) is the replica's answer and is not retried.
func replicaGone(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || target.IsConnectionError(err) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	// database/sql's error for a closed pool has no exported value.
	return strings.Contains(err.Error(), "sql: database is closed")
}

// replicaConn is the connection string of a replica at addr: the primary's
// URL with its host and port replaced.
func replicaConn(dsn, addr string) (Engine, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", errors.New("the database URL is not a URL")
	}
	u.Host = addr
	return ParseDSN(u.String())
}

// parseReplicas reads a list of HOST:PORT, one a line; blank lines are
// skipped and repeats dropped.
func parseReplicas(body []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		host, port, err := net.SplitHostPort(line)
		p, perr := strconv.Atoi(port)
		if err != nil || host == "" || strings.ContainsAny(host, "@/?#% \t") || perr != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("replica %q is not HOST:PORT", line)
		}
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// setReplicasHTTP is POST /admin/replicas: the replicas reads go to from
// now on. It answers once every new replica's pool is open with its reads
// prepared and the replicas no longer listed have finished their reads
// and closed their pools, so that the target may stop them next.
func (s *Server) setReplicasHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fail(w, r, http.StatusBadRequest, err)
		return
	}
	addrs, err := parseReplicas(body)
	if err != nil {
		fail(w, r, http.StatusBadRequest, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stmts.Load()
	if st == nil {
		fail(w, r, http.StatusConflict, errors.New("the table is not prepared; call "+PathPrepare+" before "+PathReplicas))
		return
	}
	if err := s.setReplicas(r.Context(), addrs, st.fields); err != nil {
		s.dbFail(w, r, err)
		return
	}
	fmt.Fprintf(w, "ok: %d replicas\n", len(addrs))
}

// setReplicas makes addrs the replica set (s.mu held): replicas still
// listed keep their pools, new ones get a pool with the reads prepared
// for a table of fields fields. When a new replica cannot be reached the
// set stays as it was.
func (s *Server) setReplicas(ctx context.Context, addrs []string, fields int) error {
	old := s.replicas.Load()
	next := make([]*replica, 0, len(addrs))
	var opened []*replica
	for _, a := range addrs {
		if r := findReplica(old, a); r != nil {
			next = append(next, r)
			continue
		}
		r, err := s.openReplica(ctx, a, fields)
		if err != nil {
			for _, o := range opened {
				o.close()
			}
			return err
		}
		opened = append(opened, r)
		next = append(next, r)
	}
	s.replicas.Store(next)
	var gone []*replica
	for _, r := range old {
		if findReplica(next, r.addr) == nil {
			gone = append(gone, r)
		}
	}
	retire(ctx, gone)
	return nil
}

func findReplica(set []*replica, addr string) *replica {
	for _, r := range set {
		if r.addr == addr {
			return r
		}
	}
	return nil
}

// openReplica opens a pool to the replica at addr and prepares the reads
// there. Its errors name the address, never the URL.
func (s *Server) openReplica(ctx context.Context, addr string, fields int) (*replica, error) {
	e, conn, err := replicaConn(s.cfg.DSN, addr)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", addr, err)
	}
	db, err := openDB(e, conn, s.cfg.Pool)
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", addr, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	st, err := prepare(pctx, db, e, s.cfg.Table, fields, true)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("replica %s: %w", addr, err)
	}
	return &replica{addr: addr, db: db, st: st}, nil
}

// retire waits for the reads running on replicas that left the set (for
// up to replicaDrain, or ctx's end) and closes their pools.
func retire(ctx context.Context, gone []*replica) {
	for _, r := range gone {
		r.Retire()
	}
	deadline := time.Now().Add(replicaDrain)
	for _, r := range gone {
		for r.InFlight() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
		}
		r.close()
	}
}

func (r *replica) close() {
	r.st.close()
	r.db.Close()
}

// dropReplicas empties the replica set (s.mu held): reads go to the
// primary, and every replica's pool closes once its reads are over.
func (s *Server) dropReplicas(ctx context.Context) {
	retire(ctx, s.replicas.Swap(nil))
}

// replicasHTTP is GET /admin/replicas: the reads each replica in the set
// answered, then the reads the primary answered and those retried there
// after their replica went away.
func (s *Server) replicasHTTP(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	for _, r := range s.replicas.Load() {
		fmt.Fprintf(&b, "%s\t%d\n", r.addr, r.reads.Load())
	}
	fmt.Fprintf(&b, "primary\t%d\nretried\t%d\n", s.primaryReads.Load(), s.retried.Load())
	io.WriteString(w, b.String())
}
