// Package childproc runs one side of a measurement in a child process of the same
// executable, so that the two sides have their own file descriptors, heaps and CPU
// accounting: the app fleets of `ansight bench --load` and `--enroll-flood` run in a child
// while the host runs in the measuring process.
//
// A role is a function registered by name (Register, from an init function). Start
// re-executes os.Executable() with the role named in the environment; the child's main
// (cmd/ansight's, or a test binary's TestMain) calls Main first thing, which runs the role
// and exits. Parent and child then exchange JSON values, one per line: the parent's first
// value is the role's configuration, and the child's stdin closing — the parent stopping
// it, or dying — cancels the role's context, so a child never outlives its parent.
package childproc
