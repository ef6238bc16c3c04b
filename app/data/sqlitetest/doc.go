// Package sqlitetest holds the tests of app/data, run against modernc.org/sqlite. They live
// apart from app/data so that an app that imports app/data never has the driver in its
// module graph: go mod tidy records the modules of the tests of the packages an app
// imports, and this package is not one of them.
package sqlitetest
