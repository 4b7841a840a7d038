package apptier

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/rotation"
	"github.com/headroom-dev/headroom/internal/target"
)

// Server is one application server: HTTP in front of a database pool.
type Server struct {
	cfg    Config
	engine Engine
	db     *sql.DB
	stmts  atomic.Pointer[statements]
	mu     sync.Mutex // serialises prepare and changes of the replica set

	// replicas is the read replicas' set (replicas.go), in turn.
	replicas     rotation.Set[*replica]
	primaryReads atomic.Uint64 // reads and scans the primary answered
	retried      atomic.Uint64 // of those, retries after a replica went away
}

// NewServer opens the database pool the configuration names (the pool
// connects lazily; Ping checks it).
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e, conn, err := ParseDSN(cfg.DSN)
	if err != nil {
		return nil, err
	}
	db, err := openDB(e, conn, cfg.Pool)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, engine: e, db: db}, nil
}

// Close closes the replicas' pools, the statements and the pool.
func (s *Server) Close() error {
	s.mu.Lock()
	s.dropReplicas(context.Background())
	s.mu.Unlock()
	s.stmts.Load().close()
	return s.db.Close()
}

// Handler is the server's HTTP interface (see protocol.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathHealth, s.health)
	mux.HandleFunc("POST "+PathPrepare, s.prepare)
	mux.HandleFunc("POST "+PathLoad, s.load)
	mux.HandleFunc("POST "+PathReplicas, s.setReplicasHTTP)
	mux.HandleFunc("GET "+PathReplicas, s.replicasHTTP)
	mux.HandleFunc("GET "+PathRead, s.data(s.read))
	mux.HandleFunc("GET "+PathScan, s.data(s.scan))
	mux.HandleFunc("POST "+PathUpdate, s.data(s.update))
	mux.HandleFunc("POST "+PathInsert, s.data(s.insert))
	mux.HandleFunc("POST "+PathRMW, s.data(s.rmw))
	return mux
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.db.PingContext(ctx); err != nil {
		fail(w, r, http.StatusServiceUnavailable, err)
		return
	}
	io.WriteString(w, "ok\n")
}

// prepare (re)creates the table when asked and prepares the statements.
// The replica set is emptied first: its statements are of the table as it
// was, and a replica has a new table only once it has replayed it, which
// the target waits for before it sends the replicas again.
func (s *Server) prepare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fields, err := strconv.Atoi(q.Get("fields"))
	if err != nil || fields < 1 || fields > 1000 {
		fail(w, r, http.StatusBadRequest, errors.New("fields must be a number of fields from 1 to 1000"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := r.Context()
	s.dropReplicas(ctx)
	if q.Get("ddl") == "1" {
		if q.Get("fresh") == "1" {
			if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+s.cfg.Table); err != nil {
				fail(w, r, http.StatusInternalServerError, fmt.Errorf("dropping table %s: %w", s.cfg.Table, err))
				return
			}
		}
		if _, err := s.db.ExecContext(ctx, createTable(s.cfg.Table, fields)); err != nil {
			fail(w, r, http.StatusInternalServerError, fmt.Errorf("creating table %s: %w", s.cfg.Table, err))
			return
		}
	}
	// Connections may hold plans of a table that was just replaced: start
	// the pool over.
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(s.cfg.Pool)
	st, err := prepare(ctx, s.db, s.engine, s.cfg.Table, fields, false)
	if err != nil {
		fail(w, r, http.StatusInternalServerError, err)
		return
	}
	s.stmts.Swap(st).close()
	io.WriteString(w, "ok\n")
}

// load inserts the records of the body (KEY TAB VALUES per line) in one
// transaction with one multi-row INSERT per statement-sized chunk.
func (s *Server) load(w http.ResponseWriter, r *http.Request) {
	st := s.stmts.Load()
	if st == nil {
		fail(w, r, http.StatusConflict, errors.New("the table is not prepared; call "+PathPrepare+" first"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fail(w, r, http.StatusBadRequest, err)
		return
	}
	var rows [][][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		vs := splitValues(append([]byte(nil), sc.Bytes()...))
		if len(vs) != st.fields+1 {
			fail(w, r, http.StatusBadRequest, fmt.Errorf("a load line has %d values; it needs the key and %d fields", len(vs), st.fields))
			return
		}
		rows = append(rows, vs)
	}
	ctx := r.Context()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		s.dbFail(w, r, err)
		return
	}
	defer tx.Rollback()
	// At most 60000 parameters per statement (both engines allow 65535).
	per := max(1, 60000/(st.fields+1))
	for len(rows) > 0 {
		chunk := rows[:min(per, len(rows))]
		rows = rows[len(chunk):]
		var q strings.Builder
		q.WriteString(st.insertHead)
		args := make([]any, 0, len(chunk)*(st.fields+1))
		for i, row := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteByte('(')
			for j, v := range row {
				if j > 0 {
					q.WriteString(", ")
				}
				q.WriteString(s.engine.placeholder(len(args) + 1))
				args = append(args, string(v))
			}
			q.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			s.dbFail(w, r, err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		s.dbFail(w, r, err)
		return
	}
	io.WriteString(w, "ok\n")
}

// request is one parsed data request.
type request struct {
	key   string
	field int // -1: all fields
	n     int // scan length
	body  []byte
}

// data wraps a data operation: parse, spend the CPU work, run it.
func (s *Server) data(op func(context.Context, *statements, *request, *bytes.Buffer) (int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st := s.stmts.Load()
		if st == nil {
			fail(w, r, http.StatusConflict, errors.New("the table is not prepared; call "+PathPrepare+" first"))
			return
		}
		q := r.URL.Query()
		req := &request{key: q.Get("key"), field: -1}
		if req.key == "" {
			fail(w, r, http.StatusBadRequest, errors.New("key is missing"))
			return
		}
		if f := q.Get("field"); f != "" {
			v, err := strconv.Atoi(f)
			if err != nil || v < -1 || v >= st.fields {
				fail(w, r, http.StatusBadRequest, fmt.Errorf("field %q is not a field number from 0 to %d", f, st.fields-1))
				return
			}
			req.field = v
		}
		if n := q.Get("n"); n != "" {
			v, err := strconv.Atoi(n)
			if err != nil || v < 1 {
				fail(w, r, http.StatusBadRequest, fmt.Errorf("n %q is not a positive scan length", n))
				return
			}
			req.n = v
		}
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				fail(w, r, http.StatusBadRequest, err)
				return
			}
			req.body = b
		}
		// The designed cost of the application's own logic.
		Burn(s.cfg.Work)
		var out bytes.Buffer
		status, err := op(r.Context(), st, req, &out)
		if err != nil {
			if status == 0 {
				s.dbFail(w, r, err)
			} else {
				fail(w, r, status, err)
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(out.Len()))
		w.Write(out.Bytes())
	}
}

// errNotFound is a missing record: status 404.
var errNotFound = target.ErrNotFound

// read answers from a replica when there are any (replicas.go). On an
// async replica a record inserted less than its replay lag ago is not
// there yet: the read answers 404, as for a missing record.
func (s *Server) read(ctx context.Context, st *statements, req *request, out *bytes.Buffer) (int, error) {
	n, err := s.query(ctx, st, req, out, false)
	return found(n, err)
}

// readPrimary is the read of a read-modify-write, which must see the
// latest write: always on the primary.
func (s *Server) readPrimary(ctx context.Context, st *statements, req *request, out *bytes.Buffer) (int, error) {
	n, err := runQuery(ctx, st, req, out, false)
	return found(n, err)
}

// found is a read's status: 404 when it found no row.
func found(n int, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return http.StatusNotFound, errNotFound
	}
	return 0, nil
}

// scan answers from a replica when there are any, as read.
func (s *Server) scan(ctx context.Context, st *statements, req *request, out *bytes.Buffer) (int, error) {
	if req.n == 0 {
		return http.StatusBadRequest, errors.New("n is missing")
	}
	_, err := s.query(ctx, st, req, out, true)
	return 0, err
}

func (s *Server) update(ctx context.Context, st *statements, req *request, _ *bytes.Buffer) (int, error) {
	var res sql.Result
	var err error
	if req.field >= 0 {
		if bytes.IndexByte(req.body, '\t') >= 0 {
			return http.StatusBadRequest, ErrBadValue
		}
		res, err = st.updateOne[req.field].ExecContext(ctx, string(req.body), req.key)
	} else {
		vs := splitValues(req.body)
		if len(vs) != st.fields {
			return http.StatusBadRequest, fmt.Errorf("the body has %d values; an update of all fields needs %d", len(vs), st.fields)
		}
		args := make([]any, 0, st.fields+1)
		for _, v := range vs {
			args = append(args, string(v))
		}
		res, err = st.updateAll.ExecContext(ctx, append(args, req.key)...)
	}
	if err != nil {
		return 0, err
	}
	// MySQL counts rows changed, not matched: an update that writes the
	// same value reports 0, so only PostgreSQL's count says "not found".
	if n, err := res.RowsAffected(); err == nil && n == 0 && s.engine == Postgres {
		return http.StatusNotFound, errNotFound
	}
	return 0, nil
}

func (s *Server) insert(ctx context.Context, st *statements, req *request, _ *bytes.Buffer) (int, error) {
	vs := splitValues(req.body)
	if len(vs) != st.fields {
		return http.StatusBadRequest, fmt.Errorf("the body has %d values; an insert needs %d", len(vs), st.fields)
	}
	args := make([]any, 0, st.fields+1)
	args = append(args, req.key)
	for _, v := range vs {
		args = append(args, string(v))
	}
	_, err := st.insert.ExecContext(ctx, args...)
	return 0, err
}

func (s *Server) rmw(ctx context.Context, st *statements, req *request, out *bytes.Buffer) (int, error) {
	if status, err := s.readPrimary(ctx, st, &request{key: req.key, field: req.field}, out); err != nil {
		return status, err
	}
	out.Reset()
	return s.update(ctx, st, req, out)
}

// writeRows writes each row's values, tab-separated, one line per row,
// and returns the number of rows.
func writeRows(rows *sql.Rows, out *bytes.Buffer) (int, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			if i > 0 {
				out.WriteByte('\t')
			}
			out.Write(v)
		}
		out.WriteByte('\n')
		n++
	}
	return n, rows.Err()
}

// dbFail answers a database error with its kind: 504 for a timeout, 503
// when the database refused for lack of resources, 502 when it cannot be
// reached, 409 for a conflict, 500 otherwise.
func (s *Server) dbFail(w http.ResponseWriter, r *http.Request, err error) {
	kind := errorKind(r.Context(), err)
	status := http.StatusInternalServerError
	switch kind {
	case target.KindTimeout:
		status = http.StatusGatewayTimeout
	case target.KindBusy:
		status = http.StatusServiceUnavailable
	case target.KindConnection:
		status = http.StatusBadGateway
	case target.KindDeadlock, target.KindConstraint:
		status = http.StatusConflict
	}
	if kind != "" {
		w.Header().Set(KindHeader, kind)
	}
	fail(w, r, status, err)
}

func fail(w http.ResponseWriter, _ *http.Request, status int, err error) {
	if errors.Is(err, errNotFound) {
		w.Header().Set(KindHeader, target.KindNotFound)
	}
	http.Error(w, err.Error(), status)
}
