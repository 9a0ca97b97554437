package config

import (
	"errors"
	"fmt"
)

// Sentinel errors carried inside a FieldError; test with errors.Is.
var (
	// ErrSyntax is returned when the file is not valid YAML.
	ErrSyntax = errors.New("invalid yaml")
	// ErrUnknownKey is returned for a key the config format does not have.
	ErrUnknownKey = errors.New("unknown key")
	// ErrType is returned when a value has the wrong YAML type.
	ErrType = errors.New("wrong type")
	// ErrRequired is returned when a required field is missing or empty.
	ErrRequired = errors.New("required")
	// ErrInvalid is returned when a value is present but not allowed.
	ErrInvalid = errors.New("invalid value")
	// ErrReference is returned when a field names an input, var or column
	// that does not exist.
	ErrReference = errors.New("unknown reference")
)

// FieldError is one problem in the config, with where it is.
// It prints as "pipeline.yaml:14: datasets.x.workers: must be ≥ 1".
type FieldError struct {
	File string
	Line int
	Path string
	Err  error
}

// Error gives file:line: path: cause, leaving out what is unknown.
func (e *FieldError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %v", loc, e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

// Unwrap returns the underlying sentinel-wrapping error.
func (e *FieldError) Unwrap() error { return e.Err }
