package nodetool

import (
	"errors"
	"fmt"
	"strings"
)

// ParseInfo parses `nodetool info` of Cassandra 3.11 (with its "Thrift active" line), 4.x
// and 5.0. Each line is printf("%-23s: %s"); unknown fields are skipped. The 5.0-only
// fields set Info.BootstrapState, Info.Decommissioning and Info.DecommissionFailed only
// when their line is present, so a nil pointer means "this version does not say".
// It fails when there is no "ID" line with a UUID (nodetool printed an error, or the
// output is not `info`), when a field appears twice, or when a boolean field is neither
// "true" nor "false".
func ParseInfo(out string) (Info, error) {
	var (
		info Info
		seen = map[string]int{}
	)
	for i, raw := range splitLines(out) {
		n := i + 1
		key, val, ok := strings.Cut(raw, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		var err error
		switch key {
		case "ID":
			if !uuidRE().MatchString(val) {
				return Info{}, fmt.Errorf("info line %d: ID %q is not a host ID", n, val)
			}
			info.ID = val
		case "Gossip active":
			info.GossipActive, err = infoBool(val)
		case "Native Transport active":
			info.NativeActive, err = infoBool(val)
		case "Load":
			info.Load = val
		case "Data Center":
			info.DC = val
		case "Rack":
			info.Rack = val
		case "Bootstrap state":
			info.BootstrapState = val
		case "Decommissioning":
			var b bool
			b, err = infoBool(val)
			info.Decommissioning = &b
		case "Decommission failed":
			var b bool
			b, err = infoBool(val)
			info.DecommissionFailed = &b
		default:
			continue
		}
		if err != nil {
			return Info{}, fmt.Errorf("info line %d: %q: %w", n, key, err)
		}
		if prev, dup := seen[key]; dup {
			return Info{}, fmt.Errorf("info line %d: %q is already given on line %d", n, key, prev)
		}
		seen[key] = n
	}
	if info.ID == "" {
		if e := firstErrorLine(out); e != "" {
			return Info{}, fmt.Errorf("info: nodetool printed an error instead of node info: %s", quote(e))
		}
		if strings.TrimSpace(out) == "" {
			return Info{}, errors.New("info: empty output, no \"ID\" line")
		}
		return Info{}, fmt.Errorf("info: no \"ID\" line in %d bytes of output", len(out))
	}
	return info, nil
}

func infoBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("value %q is neither true nor false", s)
}
