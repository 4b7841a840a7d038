package deploy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// A minimal client of Cassandra's native protocol (version 4), for what the
// recipe itself must do over CQL: wait until a node answers queries, set up
// the workload's role, and check a cluster in tests. The workload uses the
// cassandra target's driver instead. It runs one query per request on one
// connection, with SASL PLAIN login when the node asks for it.

// cqlConn is one authenticated connection to a node's native port.
type cqlConn struct {
	conn   net.Conn
	stream int16
}

// CQL protocol v4 opcodes (native_protocol_v4.spec, section 2.4).
const (
	cqlOpError         = 0x00
	cqlOpStartup       = 0x01
	cqlOpReady         = 0x02
	cqlOpAuthenticate  = 0x03
	cqlOpQuery         = 0x07
	cqlOpResult        = 0x08
	cqlOpAuthChallenge = 0x0E
	cqlOpAuthResponse  = 0x0F
	cqlOpAuthSuccess   = 0x10
)

// CQL consistency levels used here.
const (
	cqlOne    = 0x0001
	cqlQuorum = 0x0004
	cqlAll    = 0x0005
)

// errCQLLoginNeeded is returned when the node asks for a login and no
// user was given: the node answers, which is all a readiness probe needs.
var errCQLLoginNeeded = errors.New("cassandra asks for a login and no user was given")

// errCQLServer is wrapped by errors the node sent as an ERROR frame.
var errCQLServer = errors.New("cassandra")

// cqlServerError is an ERROR frame: its code (native_protocol_v4.spec
// section 9) and message.
type cqlServerError struct {
	Code int32
	Msg  string
}

func (e *cqlServerError) Error() string {
	return fmt.Sprintf("cassandra error 0x%04x: %s", e.Code, e.Msg)
}
func (e *cqlServerError) Unwrap() error { return errCQLServer }

// cqlBadCredentials is the ERROR code of a refused login.
const cqlBadCredentials = 0x0100

// cqlDial connects to addr and logs in as user (user "" when the node
// does not ask for a login).
func cqlDial(ctx context.Context, addr, user, password string) (*cqlConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &cqlConn{conn: conn}
	deadline := time.Now().Add(20 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	if err := c.startup(user, password); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return c, nil
}

func (c *cqlConn) Close() error { return c.conn.Close() }

func (c *cqlConn) startup(user, password string) error {
	var body []byte
	body = binary.BigEndian.AppendUint16(body, 1)
	body = cqlString(cqlString(body, "CQL_VERSION"), "3.0.0")
	op, resp, err := c.roundTrip(cqlOpStartup, body)
	if err != nil {
		return err
	}
	switch op {
	case cqlOpReady:
		return nil
	case cqlOpAuthenticate:
	default:
		return fmt.Errorf("cassandra: unexpected answer 0x%02x to STARTUP", op)
	}
	if user == "" {
		return fmt.Errorf("%w (%s)", errCQLLoginNeeded, cqlReadString(resp))
	}
	// SASL PLAIN: authzid NUL authcid NUL password.
	token := append(append(append([]byte{0}, user...), 0), password...)
	body = binary.BigEndian.AppendUint32(nil, uint32(len(token)))
	body = append(body, token...)
	op, _, err = c.roundTrip(cqlOpAuthResponse, body)
	if err != nil {
		return err
	}
	if op != cqlOpAuthSuccess {
		return fmt.Errorf("cassandra: unexpected answer 0x%02x to the login (a challenge Headroom does not answer)", op)
	}
	return nil
}

// roundTrip sends one request and reads its answer, turning an ERROR frame
// into an error.
func (c *cqlConn) roundTrip(op byte, body []byte) (byte, []byte, error) {
	c.stream++
	hdr := make([]byte, 9, 9+len(body))
	hdr[0] = 0x04 // request, protocol v4
	binary.BigEndian.PutUint16(hdr[2:], uint16(c.stream))
	hdr[4] = op
	binary.BigEndian.PutUint32(hdr[5:], uint32(len(body)))
	if _, err := c.conn.Write(append(hdr, body...)); err != nil {
		return 0, nil, err
	}
	for {
		rh := make([]byte, 9)
		if _, err := io.ReadFull(c.conn, rh); err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(rh[5:])
		if n > 256<<20 {
			return 0, nil, fmt.Errorf("cassandra: frame of %d bytes", n)
		}
		resp := make([]byte, n)
		if _, err := io.ReadFull(c.conn, resp); err != nil {
			return 0, nil, err
		}
		if rh[0] != 0x84 {
			return 0, nil, fmt.Errorf("cassandra: answer in protocol version 0x%02x, want v4", rh[0])
		}
		if int16(binary.BigEndian.Uint16(rh[2:])) != c.stream {
			continue // an event or a late answer to another request
		}
		if rh[1]&0x01 != 0 {
			return 0, nil, fmt.Errorf("cassandra: compressed answer without compression asked for")
		}
		resp = cqlSkipFlags(rh[1], resp)
		if rh[4] == cqlOpError {
			var e cqlServerError
			if len(resp) >= 4 {
				e.Code = int32(binary.BigEndian.Uint32(resp))
				e.Msg = cqlReadString(resp[4:])
			}
			return 0, nil, &e
		}
		return rh[4], resp, nil
	}
}

// cqlSkipFlags drops the tracing id, warnings and custom payload an answer
// may start with.
func cqlSkipFlags(flags byte, b []byte) []byte {
	if flags&0x02 != 0 && len(b) >= 16 { // tracing: [uuid]
		b = b[16:]
	}
	if flags&0x08 != 0 { // warning: [string list]
		var n int
		n, b = cqlShort(b)
		for range n {
			_, b = cqlTakeString(b)
		}
	}
	if flags&0x04 != 0 { // custom payload: [bytes map]
		var n int
		n, b = cqlShort(b)
		for range n {
			_, b = cqlTakeString(b)
			_, b = cqlTakeBytes(b)
		}
	}
	return b
}

// query runs one CQL statement at consistency cl and returns its rows,
// each value as the bytes the node sent (text columns are their UTF-8;
// nil is a null). Statements without rows return none.
func (c *cqlConn) query(ctx context.Context, cql string, cl uint16) ([][][]byte, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(dl)
		defer c.conn.SetDeadline(time.Time{})
	}
	body := binary.BigEndian.AppendUint32(nil, uint32(len(cql)))
	body = append(body, cql...)
	body = binary.BigEndian.AppendUint16(body, cl)
	body = append(body, 0) // no values, paging or serial consistency
	op, resp, err := c.roundTrip(cqlOpQuery, body)
	if err != nil {
		return nil, err
	}
	if op != cqlOpResult || len(resp) < 4 {
		return nil, fmt.Errorf("cassandra: unexpected answer 0x%02x to a query", op)
	}
	if kind := binary.BigEndian.Uint32(resp); kind != 2 { // not Rows
		return nil, nil
	}
	return cqlRows(resp[4:])
}

// cqlRows decodes a Rows result (native_protocol_v4.spec section 4.2.5.2).
func cqlRows(b []byte) ([][][]byte, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("cassandra: short rows result")
	}
	flags := binary.BigEndian.Uint32(b)
	ncols := int(binary.BigEndian.Uint32(b[4:]))
	b = b[8:]
	if flags&0x0002 != 0 { // paging state
		_, b = cqlTakeBytes(b)
	}
	if flags&0x0004 == 0 { // metadata present
		global := flags&0x0001 != 0
		if global {
			_, b = cqlTakeString(b)
			_, b = cqlTakeString(b)
		}
		for range ncols {
			if !global {
				_, b = cqlTakeString(b)
				_, b = cqlTakeString(b)
			}
			_, b = cqlTakeString(b)
			var err error
			if b, err = cqlSkipType(b); err != nil {
				return nil, err
			}
		}
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("cassandra: short rows result")
	}
	nrows := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	rows := make([][][]byte, 0, nrows)
	for range nrows {
		row := make([][]byte, ncols)
		for j := range row {
			if len(b) < 4 {
				return nil, fmt.Errorf("cassandra: short rows result")
			}
			row[j], b = cqlTakeBytes(b)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// cqlSkipType skips one [option] of a column's type.
func cqlSkipType(b []byte) ([]byte, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("cassandra: short column type")
	}
	var id int
	id, b = cqlShort(b)
	switch id {
	case 0x0000: // custom: class name
		_, b = cqlTakeString(b)
	case 0x0020, 0x0022: // list, set
		return cqlSkipType(b)
	case 0x0021: // map
		b, err := cqlSkipType(b)
		if err != nil {
			return nil, err
		}
		return cqlSkipType(b)
	case 0x0030: // user type: keyspace, name, fields
		_, b = cqlTakeString(b)
		_, b = cqlTakeString(b)
		var n int
		n, b = cqlShort(b)
		for range n {
			_, b = cqlTakeString(b)
			var err error
			if b, err = cqlSkipType(b); err != nil {
				return nil, err
			}
		}
	case 0x0031: // tuple
		var n int
		n, b = cqlShort(b)
		for range n {
			var err error
			if b, err = cqlSkipType(b); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func cqlString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

func cqlShort(b []byte) (int, []byte) {
	if len(b) < 2 {
		return 0, nil
	}
	return int(binary.BigEndian.Uint16(b)), b[2:]
}

func cqlTakeString(b []byte) (string, []byte) {
	n, b := cqlShort(b)
	if n > len(b) {
		return "", nil
	}
	return string(b[:n]), b[n:]
}

func cqlReadString(b []byte) string {
	s, _ := cqlTakeString(b)
	return s
}

// cqlTakeBytes reads a [bytes]: a negative length is null.
func cqlTakeBytes(b []byte) ([]byte, []byte) {
	if len(b) < 4 {
		return nil, nil
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 {
		return nil, b
	}
	if int(n) > len(b) {
		return nil, nil
	}
	return b[:n], b[n:]
}
