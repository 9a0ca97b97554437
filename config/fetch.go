package config

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// FetchFile is one published release file of a dataset: where it is
// downloaded from, its published checksum if there is one, and where it
// goes under the data root (the path the dataset's inputs read).
type FetchFile struct {
	// URL is where the file is published (http or https).
	URL string `yaml:"url"`
	// To is the path under the data root: the file, or for an archive
	// the folder its extracted files go to.
	To string `yaml:"to"`
	// SHA256 is the published sha256 of the downloaded bytes (hex);
	// empty when none is published.
	SHA256 string `yaml:"sha256"`
	// MD5 is the published MD5 of the downloaded bytes (hex), for hosts
	// that publish only that (Google Cloud Storage's ETag); empty when
	// none is published.
	MD5 string `yaml:"md5"`
	// Archive is tar.gz or zip when the download is an archive to
	// extract; empty for a plain file.
	Archive string `yaml:"archive"`
	// Extract is the folder inside the archive, below its single top
	// folder (GitHub's owner-repo-commit/), whose files go to To.
	Extract string `yaml:"extract"`
	// Note says where else the file is published, or why it has no
	// checksum; fetch prints it.
	Note string `yaml:"note"`
}

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// safeRel reports whether p is a relative slash path that stays under its
// root.
func safeRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return false
	}
	return !leavesRoot(p)
}

// leavesRoot reports whether the relative slash path p leads out of its
// root (.. past its start).
func leavesRoot(p string) bool {
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

func (c *Config) validateFetch(p string, files []*FetchFile, add addFunc) {
	for i, f := range files {
		fp := fmt.Sprintf("%s[%d]", p, i)
		if f == nil {
			add(fp, ErrRequired, "empty fetch entry")
			continue
		}
		if u, err := url.Parse(f.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(fp+".url", ErrInvalid, "must be an http or https URL, got %q", f.URL)
		}
		if !safeRel(f.To) || path.Clean(f.To) == "." {
			// "." (or x/..) is the data root itself, which a fetch of an
			// archive would empty before extracting.
			add(fp+".to", ErrInvalid, "must be a relative path of a file or folder under the data root, got %q", f.To)
		}
		// Published in either case (a GCS ETag, a release page's text):
		// compared as the lower-case hex fetch computes.
		f.SHA256, f.MD5 = strings.ToLower(f.SHA256), strings.ToLower(f.MD5)
		if f.SHA256 != "" && (len(f.SHA256) != 64 || !hexRE.MatchString(f.SHA256)) {
			add(fp+".sha256", ErrInvalid, "must be 64 hex digits, got %q", f.SHA256)
		}
		if f.MD5 != "" && (len(f.MD5) != 32 || !hexRE.MatchString(f.MD5)) {
			add(fp+".md5", ErrInvalid, "must be 32 hex digits, got %q", f.MD5)
		}
		switch f.Archive {
		case "", "tar.gz", "zip":
		default:
			add(fp+".archive", ErrInvalid, "must be tar.gz or zip, got %q", f.Archive)
		}
		if f.Extract != "" && (f.Archive == "" || !safeRel(f.Extract)) {
			add(fp+".extract", ErrInvalid, "needs archive: and a relative folder inside it, got %q", f.Extract)
		}
	}
}
