package apptier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
)

func TestBurnSpendsThreadCPU(t *testing.T) {
	if got := Burn(0); got != 0 {
		t.Fatalf("Burn(0) = %v", got)
	}
	for _, d := range []time.Duration{time.Millisecond, 15 * time.Millisecond} {
		got := Burn(d)
		if got < d {
			t.Fatalf("Burn(%v) spent %v of CPU, less than asked", d, got)
		}
	}
}

func TestParseDSN(t *testing.T) {
	for _, c := range []struct {
		in     string
		engine Engine
		want   string
	}{
		{"postgres://u:p%40ss@10.0.0.1:5432/db", Postgres, "postgres://u:p%40ss@10.0.0.1:5432/db?sslmode=disable"},
		{"postgres://u:pw@h:1/db?sslmode=require", Postgres, "postgres://u:pw@h:1/db?sslmode=require"},
		{"mysql://u:pw@10.0.0.2:3306/db", MySQL, "u:pw@tcp(10.0.0.2:3306)/db"},
		{"mariadb://u:pw@h/db", MySQL, "u:pw@tcp(h:3306)/db"},
	} {
		e, conn, err := ParseDSN(c.in)
		if err != nil || e != c.engine || !strings.HasPrefix(conn, c.want) {
			t.Errorf("ParseDSN(%q) = %q, %q, %v; want %q, %q", c.in, e, conn, err, c.engine, c.want)
		}
	}
	for _, bad := range []string{"secretpw", "redis://u:secretpw@h:1/0", "postgres://u:secretpw@h:1"} {
		_, _, err := ParseDSN(bad)
		if err == nil || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("ParseDSN(%q): error %v (must fail without showing the password)", bad, err)
		}
	}
}

func TestParseArgs(t *testing.T) {
	t.Setenv("T_APP_DSN", "postgres://u:pw@h:1/db")
	cfg, err := ParseArgs([]string{"--listen", "127.0.0.1:0", "--db", "T_APP_DSN", "--cpu-work", "2ms", "--pool", "4"}, io.Discard)
	if err != nil || cfg.Work != 2*time.Millisecond || cfg.Pool != 4 || cfg.Table != DefaultTable || cfg.DSN != "postgres://u:pw@h:1/db" {
		t.Fatalf("%+v, %v", cfg, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "x:1", "--db", "T_APP_UNSET"}, "T_APP_UNSET is empty"},
		{[]string{"--db", "T_APP_DSN"}, "--listen is required"},
		{[]string{"--listen", "x:1", "--db", "T_APP_DSN", "--pool", "0"}, "--pool 0"},
		{[]string{"--listen", "x:1", "--db", "T_APP_DSN", "--table", "a;b"}, `--table "a;b"`},
		{[]string{"--listen", "x:1", "--db", "T_APP_DSN", "extra"}, `unexpected argument "extra"`},
	} {
		if _, err := ParseArgs(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// startDB runs a private server of recipe r for the test and returns its
// URL.
func startDB(t *testing.T, r deploy.Recipe, scheme string) string {
	t.Helper()
	base := labtest.SearchableDir(t)
	ctx := context.Background()
	inst, err := deploy.Start(ctx, r, filepath.Join(base, r.Kind()), deploy.Managed{Settings: map[string]string{}})
	labtest.StartedOrSkip(t, err)
	t.Cleanup(func() { inst.Remove(context.Background()) })
	u := url.URL{Scheme: scheme, User: url.UserPassword(inst.User, inst.Password), Host: inst.Addr(), Path: "/" + inst.Database}
	return u.String()
}

func TestServerOnPostgres(t *testing.T) { testServer(t, startDB(t, deploy.Postgres(), "postgres")) }
func TestServerOnMariaDB(t *testing.T)  { testServer(t, startDB(t, deploy.MariaDB(), "mysql")) }

// testServer runs every operation of the protocol against a real database.
func testServer(t *testing.T, dsn string) {
	s, err := NewServer(Config{Listen: "127.0.0.1:0", DSN: dsn, Pool: 4, Table: "usertable", Work: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	call := func(method, path, body string) (int, string, string) {
		t.Helper()
		return httpCall(t, hs.URL, method, path, body)
	}
	if code, body, _ := call("GET", PathRead+"?key=user1", ""); code != http.StatusConflict || !strings.Contains(body, "not prepared") {
		t.Fatalf("read before prepare: %d %q", code, body)
	}
	if code, body, _ := call("POST", PathPrepare+"?fields=3&ddl=1&fresh=1", ""); code != 200 {
		t.Fatalf("prepare: %d %q", code, body)
	}
	var load bytes.Buffer
	for i := range 10 {
		fmt.Fprintf(&load, "user%02d\ta%d\tb%d\tc%d\n", i, i, i, i)
	}
	if code, body, _ := call("POST", PathLoad, load.String()); code != 200 {
		t.Fatalf("load: %d %q", code, body)
	}
	checks := []struct {
		method, path, body string
		code               int
		want, kind         string
	}{
		{"GET", PathHealth, "", 200, "ok\n", ""},
		{"GET", PathRead + "?key=user03", "", 200, "a3\tb3\tc3\n", ""},
		{"GET", PathRead + "?key=user03&field=1", "", 200, "b3\n", ""},
		{"GET", PathRead + "?key=nobody", "", 404, "record not found\n", "not_found"},
		{"GET", PathScan + "?key=user07&n=5", "", 200, "a7\tb7\tc7\na8\tb8\tc8\na9\tb9\tc9\n", ""},
		{"GET", PathScan + "?key=user07&n=2&field=2", "", 200, "c7\nc8\n", ""},
		{"POST", PathUpdate + "?key=user03&field=0", "A3", 200, "", ""},
		{"GET", PathRead + "?key=user03", "", 200, "A3\tb3\tc3\n", ""},
		{"POST", PathUpdate + "?key=user04", "x\ty\tz", 200, "", ""},
		{"GET", PathRead + "?key=user04", "", 200, "x\ty\tz\n", ""},
		{"POST", PathInsert + "?key=user99", "p\tq\tr", 200, "", ""},
		{"POST", PathInsert + "?key=user99", "p\tq\tr", 409, "", "constraint"},
		{"POST", PathRMW + "?key=user99&field=2", "R", 200, "", ""},
		{"GET", PathRead + "?key=user99", "", 200, "p\tq\tR\n", ""},
		{"POST", PathRMW + "?key=nobody&field=2", "R", 404, "record not found\n", "not_found"},
		{"POST", PathUpdate + "?key=user04", "only\ttwo", 400, "the body has 2 values; an update of all fields needs 3\n", ""},
		{"GET", PathRead + "?key=user04&field=7", "", 400, "field \"7\" is not a field number from 0 to 2\n", ""},
		{"GET", PathScan + "?key=user04", "", 400, "n is missing\n", ""},
	}
	for _, c := range checks {
		code, body, kind := call(c.method, c.path, c.body)
		if code != c.code || (c.want != "" && body != c.want) || kind != c.kind {
			t.Errorf("%s %s: %d %q kind %q; want %d %q kind %q", c.method, c.path, code, body, kind, c.code, c.want, c.kind)
		}
	}
	// A second server sharing the table prepares without touching it.
	if code, body, _ := call("POST", PathPrepare+"?fields=3", ""); code != 200 {
		t.Fatalf("prepare without ddl: %d %q", code, body)
	}
	if code, body, _ := call("GET", PathRead+"?key=user99", ""); code != 200 || body != "p\tq\tR\n" {
		t.Fatalf("after a second prepare: %d %q", code, body)
	}
}

func TestAppendValues(t *testing.T) {
	b, err := AppendValues(nil, [][]byte{[]byte("a"), []byte("b")})
	if err != nil || string(b) != "a\tb" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := AppendValues(nil, [][]byte{[]byte("a\tb")}); !errors.Is(err, ErrBadValue) {
		t.Fatalf("tab in a value: %v", err)
	}
}

// A stop while a request waits on the database is still clean: after the
// grace period the request is cancelled and Serve returns nil (it used to
// return "context deadline exceeded", and serve-app exited with 1).
func TestServeStopsCleanlyWithRequestInFlight(t *testing.T) {
	// A "database" that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			accepted <- struct{}{}
		}
	}()
	old := shutdownGrace
	shutdownGrace = 100 * time.Millisecond
	defer func() { shutdownGrace = old }()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Config{Listen: "127.0.0.1:0", DSN: "postgres://u:pw@" + silent.Addr().String() + "/db", Pool: 1, Table: DefaultTable},
			func(addr string) { addrc <- addr })
	}()
	addr := <-addrc
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if resp, err := http.Get("http://" + addr + PathHealth); err == nil {
			resp.Body.Close()
		}
	}()
	// The health check now waits on the database.
	<-accepted
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve returned %v after a stop with a request in flight; want nil", err)
	}
	<-answered
}

// httpCall sends one request to the server at base and returns its
// status, its body and its error-kind header.
func httpCall(t *testing.T, base, method, path, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get(KindHeader)
}
