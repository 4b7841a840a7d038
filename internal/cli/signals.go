package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals are the signals that stop a run or probe cleanly: Ctrl-C,
// SIGTERM (a service manager or kill), and SIGHUP (the terminal or ssh
// session that started it went away).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopContext is a context cancelled by the first stop signal. The second
// one ends the process the ordinary way (the handler is removed after the
// first). exitCode is the shell's convention for the signal that stopped it
// (128 + its number: 130 for Ctrl-C, 129 for SIGHUP, 143 for SIGTERM), or
// ExitInterrupted when none did.
type stopContext struct {
	context.Context
	got atomic.Value // os.Signal
}

func newStopContext() (*stopContext, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sc := &stopContext{Context: ctx}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		select {
		case s := <-ch:
			sc.got.Store(s)
			signal.Stop(ch)
			cancel()
		case <-ctx.Done():
			signal.Stop(ch)
		}
	}()
	return sc, cancel
}

// exitCode is the exit status for a stop caused by a signal.
func (sc *stopContext) exitCode() int {
	if s, ok := sc.got.Load().(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// stoppedBy begins the one line that says why the work stopped.
func (sc *stopContext) stoppedBy() string {
	switch sc.got.Load() {
	case syscall.SIGHUP:
		return "stopped by SIGHUP (the terminal or session closed)"
	case syscall.SIGTERM:
		return "stopped by SIGTERM"
	}
	return "interrupted"
}
