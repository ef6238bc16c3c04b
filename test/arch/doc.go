// Package arch holds the architecture test: the properties docs/architecture.md states about
// the module's packages, checked against the code so that the document cannot drift.
//
//   - The package table (`| package | owns | imports |`) has a row for every package of the
//     module and none for a package that is gone, and each row's imports are exactly the
//     ones its packages' code makes (go list's Imports, test files left out): the module's
//     packages by path, other modules by short name (the module path without a leading
//     github.com/ or golang.org/).
//   - The table is the layer order: a package imports only packages of rows above its own,
//     and the rows of a top-level folder (internal/ one folder) are together, so no
//     folder-level import runs upward.
//   - internal/ holds leaves only: no package under the module's top-level internal/
//     imports a package of the module outside it.
//   - The CLI (cmd/ansight/internal/cli) has no function of 60 lines or more.
//   - The nested module test/outside keeps the tests that check what clients link
//     (TestSDKAppsCompileNoTooling, TestContractClientsLinkNoHost), and CI runs it.
//
// figures.go (a script: go run ./test/arch/figures.go [-C checkout]) prints issue 23's
// measures of any checkout, including ones older than this package.
//
// The package has no code of its own; see arch_test.go.
package arch
