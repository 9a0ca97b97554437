// Package config loads pipeline.yaml: the run settings, the Parquet
// writer settings and the declaration of every dataset (inputs, output
// tables and their steps).
//
// Loading is strict: an unknown or misspelt key is an error with the
// nearest valid key suggested, defaults are applied to fields left out,
// and Validate reports every problem at once, each as
// "pipeline.yaml:LINE: path.to.field: what is wrong".
package config
