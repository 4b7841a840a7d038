package lab

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Owner describes the process a lab belongs to, so that lab status and a
// refusal can tell a person whose lab it is and where its results go; the
// process ID alone says nothing once a shell has scrolled away.
type Owner struct {
	Command  string    `json:"command,omitempty"`  // the owner's command line
	Campaign string    `json:"campaign,omitempty"` // the campaign's name
	Results  string    `json:"results,omitempty"`  // the campaign's results directory
	Since    time.Time `json:"since,omitzero"`     // when it brought the lab up or took it over (set by Up)
}

// ownerFor is the owner Up records at now: opt.Owner, with this process's
// command line when none was given.
func ownerFor(opt Options, now time.Time) Owner {
	o := opt.Owner
	if o.Command == "" {
		o.Command = strings.Join(os.Args, " ")
	}
	o.Since = now.UTC()
	return o
}

// OwnerRunning reports whether the lab belongs to another process that is
// still running: that process uses the lab and takes it down when it ends,
// so no other may take it over or down. A persistent lab (owner 0) and one
// whose owner died belong to nobody.
func (st State) OwnerRunning() bool {
	return st.Owner != 0 && st.Owner != os.Getpid() && alive(st.Owner)
}

// OwnerSince is when the lab's owner took it: its creation for a state
// file written before owners were described.
func (st State) OwnerSince() time.Time {
	if !st.OwnedBy.Since.IsZero() {
		return st.OwnedBy.Since
	}
	return st.Created
}

// DescribeOwner names the lab's owner in words: its process, command line,
// campaign, results directory and since when, as far as they are known.
func (st State) DescribeOwner() string {
	var who string
	if st.Owner == 0 {
		who = "no process (it was brought up to stay"
		if st.OwnedBy.Command != "" {
			who += ", by " + st.OwnedBy.Command
		}
		who += ")"
	} else {
		who = fmt.Sprintf("process %d", st.Owner)
		var parts []string
		if st.OwnedBy.Command != "" {
			parts = append(parts, st.OwnedBy.Command)
		}
		if st.OwnedBy.Campaign != "" {
			parts = append(parts, "campaign "+st.OwnedBy.Campaign)
		}
		if st.OwnedBy.Results != "" {
			parts = append(parts, "results in "+st.OwnedBy.Results)
		}
		if len(parts) > 0 {
			who += " (" + strings.Join(parts, ", ") + ")"
		}
	}
	return who + ", since " + st.OwnerSince().Format("2006-01-02 15:04:05 UTC")
}

// ErrInUse is what refusals to take over or take down a lab whose owner
// still runs match (errors.Is).
var ErrInUse = errors.New("the lab is in use by a process that is still running")

type inUseError struct{ msg string }

func (e *inUseError) Error() string        { return e.msg }
func (e *inUseError) Is(target error) bool { return target == ErrInUse }

// refuseTakeOver is Up's refusal of a lab whose owner still runs: two
// campaigns in one lab would measure each other's load and the first to
// end would take the lab down under the other.
func refuseTakeOver(st *State) error {
	if !st.OwnerRunning() {
		return nil
	}
	return &inUseError{fmt.Sprintf("lab %s is in use by %s; wait for that process to end or stop it, or give this lab another name (lab.name)", st.Name, st.DescribeOwner())}
}

// refuseDown is Down's refusal of a lab whose owner still runs, unless
// forced: its owner would go on measuring hosts that are gone.
func refuseDown(st *State, force bool) error {
	if force || !st.OwnerRunning() {
		return nil
	}
	return &inUseError{fmt.Sprintf("lab %s is in use by %s; wait for that process to end or stop it, or take the lab down anyway with headroom lab down --force %s", st.Name, st.DescribeOwner(), st.Name)}
}

// checkNameFree refuses early, before Up needs root, a lab name another
// running process owns; Up decides again under the lock.
func checkNameFree(name string) error {
	st, err := readState(name)
	if err != nil {
		return nil // none, or unreadable: Up reads it again and says so
	}
	return refuseTakeOver(st)
}

// CheckDown returns the refusal Down would give lab name now (its owner
// still runs), or nil; it needs no root, so a command can say it first.
func CheckDown(name string) error {
	st, err := readState(name)
	if err != nil {
		return nil
	}
	return refuseDown(st, false)
}

// ForceDown removes lab name as Down does, even while its owner runs.
func ForceDown(name string) error { return down(name, true) }

// InUse lists the labs whose owner is another process still running.
func InUse() []State {
	var out []State
	for _, st := range List() {
		if st.OwnerRunning() {
			out = append(out, st)
		}
	}
	return out
}
