// Package privdir prepares the directories that hold the host's secrets (the pairing store,
// the control socket): created private when missing, refused when they already exist and
// other users can write to them. It never changes the mode of a directory it did not create:
// a state directory pointed at a shared place (/tmp, a project directory) must not have
// that place's permissions changed under its other users.
package privdir
