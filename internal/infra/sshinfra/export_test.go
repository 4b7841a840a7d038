package sshinfra

// FakeUname makes hosts answer `uname -s -m` with answer until the
// returned function is called: a test's way to a host of another
// architecture.
func FakeUname(answer string) (restore func()) {
	old := unameCommand
	unameCommand = "echo " + shellQuote(answer)
	return func() { unameCommand = old }
}
