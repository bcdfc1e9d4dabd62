package flussoutput

import "fmt"

// action is what a message's row does to the table.
type action int

const (
	actWrite  action = iota // append (log table) or upsert (primary-key table)
	actDelete               // delete the row's key (primary-key tables)
	actSkip                 // nothing (-U: the +U after it carries the new row)
)

// actionOf maps a change type (the fluss input's fluss_change_type) to what
// the row does to a log table or, with primaryKey, a primary-key table.
func actionOf(changeType string, primaryKey bool) (action, error) {
	switch changeType {
	case "", "+A", "+I":
		return actWrite, nil
	case "+U", "-U", "-D":
		if !primaryKey {
			return 0, fmt.Errorf("field %s: change type %s needs a primary-key table; a log table takes appends only (+A, +I or empty): map the message's change type, or drop such messages, before this output", foFieldChangeType, changeType)
		}
		switch changeType {
		case "+U":
			return actWrite, nil
		case "-U":
			return actSkip, nil
		}
		return actDelete, nil
	}
	return 0, fmt.Errorf("field %s: %q is not a change type (+A, +I, +U, -U, -D, or empty for +I)", foFieldChangeType, changeType)
}
