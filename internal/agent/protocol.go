// Package agent runs Headroom's load on several machines at once: `headroom
// agent` processes (the agents) each offer a share of a run's load and send
// every interval's histograms and counters to the coordinator, which merges
// them exactly into the run's intervals (docs/fleet.md, "Load agents").
//
// The package holds the wire protocol, the agent's side (Serve), the
// coordinator's side (Coordinator) and the merge. How an agent turns a work
// order into load (a spec, a target, the load engine) is the campaign's
// business, handed in as a Runner, so that this package depends on neither.
package agent

import (
	"bufio"
	"crypto/hmac"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version. Both sides send it first; a peer that
// speaks another version is refused with a sentence naming both. Bump it on
// any change of a message's meaning. Version 2: the coordinator proves the
// token too (welcome's mac), and the agent sends its own nonce. Version 3:
// every frame after the handshake carries a MAC (sealed frames, below).
const Version = 3

// maxFrame bounds a frame so that a confused or hostile peer cannot make the
// other side allocate without limit. An interval of a YCSB mix (six
// operations, two phases, each histogram at most a few kilobytes encoded)
// is far below it.
const maxFrame = 16 << 20

// The wire format is a sequence of frames, each a 4-byte big-endian length
// followed by that many bytes of one JSON-encoded Msg. Histograms travel
// inside the JSON as the results store writes them: the standard
// HdrHistogram V2 compressed encoding, base64. After the handshake every
// frame is sealed: its JSON is followed by a MAC over it, the direction and
// its number in the session (auth.go, sealMAC), so that a frame changed,
// dropped, replayed or injected by anyone without the token ends the
// session instead of reaching the merge.
//
// A session (C = coordinator, A = agent):
//
//	C: challenge {version, nonce = Nc}
//	A: hello     {version, name, nonce = Na, mac = proof(token, agent, Na, Nc, name)}
//	C: welcome   {mac = proof(token, coordinator, Nc, Na, name)}
//	             or error {error} and close
//	A: (closes without a word when welcome's mac is not the coordinator's)
//	then, per run:
//	C: ping {t1}  A: pong {t1, t2, t3}    (several times: clock offset)
//	C: order {order}
//	A: ready {ready}                      or error {error}
//	C: start {start_at}                   (in the agent's clock)
//	A: interval {interval} ...            (as each completes)
//	A: result {result}                    or error {error}
//	C: stop {}                            (the run is interrupted; optional)
//	finally C: bye {}
const (
	msgChallenge = "challenge"
	msgHello     = "hello"
	msgWelcome   = "welcome"
	msgError     = "error"
	msgPing      = "ping"
	msgPong      = "pong"
	msgOrder     = "order"
	msgReady     = "ready"
	msgStart     = "start"
	msgInterval  = "interval"
	msgResult    = "result"
	msgStop      = "stop"
	msgBye       = "bye"
)

// Msg is one frame. Only the fields of its Type are set.
type Msg struct {
	Type    string `json:"type"`
	Version int    `json:"version,omitempty"`
	Nonce   []byte `json:"nonce,omitempty"`
	Name    string `json:"name,omitempty"`
	MAC     []byte `json:"mac,omitempty"`
	Error   string `json:"error,omitempty"`
	// Clock exchange, unix nanoseconds: t1 the coordinator's send, t2 the
	// agent's receipt, t3 the agent's reply.
	T1 int64 `json:"t1,omitempty"`
	T2 int64 `json:"t2,omitempty"`
	T3 int64 `json:"t3,omitempty"`
	// Run numbers the coordinator's runs: an order carries it and the
	// agent's ready, interval, result and error messages of that run echo
	// it, so that a late message of an earlier run is never taken for one
	// of the current run.
	Run uint64 `json:"run,omitempty"`
	// StartAt is the run's start instant in the agent's clock, unix ns.
	StartAt  int64        `json:"start_at,omitempty"`
	Order    *Order       `json:"order,omitempty"`
	Ready    *Ready       `json:"ready,omitempty"`
	Interval *IntervalMsg `json:"interval,omitempty"`
	Result   *ResultMsg   `json:"result,omitempty"`
}

// Order is what an agent runs: the campaign's spec and treatment (for the
// target and workload sections), the target's address (the managed server
// the coordinator started), the run's level and the agent's share of it.
type Order struct {
	RunID     int64   `json:"run_id"`
	Spec      string  `json:"spec"`      // the spec's YAML source
	SpecFile  string  `json:"spec_file"` // its name, for messages
	Treatment string  `json:"treatment"` // "" for a campaign without treatments
	Address   string  `json:"address"`   // the target's address; "" = as the spec says
	Level     float64 `json:"level"`     // the whole run's level (req/s or clients)
	Share     Share   `json:"share"`
	// User and Password are the managed server's generated credentials
	// ("" when the spec's own apply): they travel only over this
	// connection and are never stored or logged.
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	// Phases, when set, replace the spec's warmup, measure and interval
	// (a probe's window: no warmup, 1 s intervals).
	Phases *Phases `json:"phases,omitempty"`
}

// Phases are a run's timing, in nanoseconds.
type Phases struct {
	Warmup   int64 `json:"warmup_ns"`
	Measure  int64 `json:"measure_ns"`
	Interval int64 `json:"interval_ns"`
}

// Ready says the agent has opened the target and its clients and waits for
// the start instant; Hist is the geometry of its latency histograms, which
// must be the coordinator's for the merge to be exact.
type Ready struct {
	Hist HistRange `json:"hist"`
}

// HistRange is an HdrHistogram's range and precision.
type HistRange struct {
	Lowest  int64 `json:"lowest"`
	Highest int64 `json:"highest"`
	SigFigs int64 `json:"sig_figs"`
}

func (h HistRange) String() string {
	return fmt.Sprintf("%d..%d µs at %d significant digits", h.Lowest, h.Highest, h.SigFigs)
}

// IntervalMsg is one completed interval of an agent: per (phase,
// operation) statistics, as the load engine hands them out.
type IntervalMsg struct {
	Index    int64    `json:"index"`
	StartNs  int64    `json:"start_ns"`    // since the agent's start of the run
	Duration int64    `json:"duration_ns"` // the interval's length (the last may be shorter)
	Phase    string   `json:"phase"`       // "warmup" or "measure": the phase its start falls in
	Stats    []OpStat `json:"stats"`
}

// OpStat is one operation's statistics in one interval of one phase.
type OpStat struct {
	Phase      string           `json:"phase"`
	Op         string           `json:"op"`
	Count      int64            `json:"count"`
	Errors     int64            `json:"errors"`
	Late       int64            `json:"late"`
	Dropped    int64            `json:"dropped"`
	ErrorKinds map[string]int64 `json:"error_kinds,omitempty"`
	Hist       string           `json:"hist"` // HdrHistogram V2 compressed, base64
}

// ResultMsg is an agent's summary of its share of a run (load.Result's
// figures that add up across agents, and its own client-limit verdict).
type ResultMsg struct {
	Warmup, Measured Totals
	Unfinished       int64            `json:"unfinished"`
	MeasureStartNs   int64            `json:"measure_start_ns"`
	MeasureEndNs     int64            `json:"measure_end_ns"`
	TargetRate       float64          `json:"target_rate"`
	SentRate         float64          `json:"sent_rate"`
	Throughput       float64          `json:"throughput"`
	ClientCPU        float64          `json:"client_cpu"` // % of one core
	Cores            int              `json:"cores"`
	CPUSaturated     bool             `json:"cpu_saturated,omitempty"` // load.Result.CPUSaturated (its cgroup's CPU quota counted); older agents leave it false
	ClientLimited    bool             `json:"client_limited"`
	Note             string           `json:"note,omitempty"`
	Interrupted      bool             `json:"interrupted,omitempty"`
	ErrorKinds       map[string]int64 `json:"error_kinds,omitempty"`
	FirstError       string           `json:"first_error,omitempty"`
	// StartSkewNs is how much later than the ordered instant the agent's
	// engine actually started (its clock).
	StartSkewNs int64 `json:"start_skew_ns"`
}

// Totals mirror load.Totals.
type Totals struct {
	Completed int64 `json:"completed"`
	Errors    int64 `json:"errors"`
	Late      int64 `json:"late"`
	Dropped   int64 `json:"dropped"`
	LateWake  int64 `json:"late_wake"`
}

// conn reads and writes frames on one connection. Writes are serialised by
// the caller (each side writes from one goroutine at a time), and reads
// come from one goroutine.
type conn struct {
	r *bufio.Reader
	w io.Writer
	// key seals the frames once the handshake is done (seal); nil before.
	key              []byte
	sendDir, recvDir byte   // the direction of each way, in the MAC
	sendSeq, recvSeq uint64 // frames sealed each way so far
}

// seal makes every later frame carry a MAC under key: sent ones as role,
// received ones as the other role.
func (c *conn) seal(key []byte, role string) {
	c.key = key
	c.sendDir, c.recvDir = dirCoordinator, dirAgent
	if role == roleAgent {
		c.sendDir, c.recvDir = dirAgent, dirCoordinator
	}
}

// ErrTampered is a sealed frame whose MAC is not the session's.
var ErrTampered = errors.New("a message on the agent connection does not carry this session's MAC: it was changed, replayed or injected on the way, so the connection is closed; run agents on a network you trust")

func newConn(rw io.ReadWriter) *conn { return &conn{r: bufio.NewReader(rw), w: rw} }

// errFrameTooLarge is returned for a frame beyond maxFrame.
var errFrameTooLarge = errors.New("frame too large")

func (c *conn) send(m Msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	n := len(b)
	if c.key != nil {
		n += macLen
	}
	if n > maxFrame {
		return fmt.Errorf("%s message of %d bytes: %w", m.Type, n, errFrameTooLarge)
	}
	buf := make([]byte, 4, 4+n)
	binary.BigEndian.PutUint32(buf, uint32(n))
	buf = append(buf, b...)
	if c.key != nil {
		buf = append(buf, sealMAC(c.key, c.sendDir, c.sendSeq, b)...)
		c.sendSeq++
	}
	_, err = c.w.Write(buf)
	return err
}

func (c *conn) recv() (Msg, error) {
	var head [4]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		return Msg{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxFrame {
		return Msg{}, fmt.Errorf("a frame of %d bytes (at most %d): %w; is the peer a Headroom agent or coordinator?", n, maxFrame, errFrameTooLarge)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return Msg{}, fmt.Errorf("a frame cut short: %w", err)
	}
	if c.key != nil {
		if len(b) < macLen {
			return Msg{}, ErrTampered
		}
		b, mac := b[:len(b)-macLen], b[len(b)-macLen:]
		if !hmac.Equal(mac, sealMAC(c.key, c.recvDir, c.recvSeq, b)) {
			return Msg{}, ErrTampered
		}
		c.recvSeq++
		return decode(b)
	}
	return decode(b)
}

func decode(b []byte) (Msg, error) {
	var m Msg
	if err := json.Unmarshal(b, &m); err != nil {
		return Msg{}, fmt.Errorf("a frame that is not a protocol message: %w", err)
	}
	return m, nil
}

// expect receives one message and checks its type; a peer's error message
// becomes the error.
func (c *conn) expect(typ string) (Msg, error) {
	m, err := c.recv()
	if err != nil {
		return m, err
	}
	if m.Type == msgError {
		return m, &PeerError{m.Error}
	}
	if m.Type != typ {
		return m, fmt.Errorf("expected a %s message, got %q", typ, m.Type)
	}
	return m, nil
}

// PeerError is an error the other side reported (one sentence).
type PeerError struct{ Msg string }

func (e *PeerError) Error() string { return e.Msg }
