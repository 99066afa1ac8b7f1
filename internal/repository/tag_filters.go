package repository

// jsonTagWhere is the WHERE terms that select rows by the tags in a JSON
// text column (calendars, endpoints, subscriptions): within a token's scope
// (unless unrestricted), carrying any of anyTags and all of allTags. ok is
// false when the scope is empty: nothing can match.
func (s *Store) jsonTagWhere(column string, scope []string, unrestricted bool, anyTags, allTags []string) (
	where []string, args []any, ok bool) {
	anyOf := func(tags []string) {
		where = append(where, `EXISTS (SELECT 1 FROM `+s.d.jsonStrings(column)+` WHERE j.value IN (`+
			placeholders(len(tags))+`))`)
		args = append(args, stringArgs(tags)...)
	}
	if !unrestricted {
		if len(scope) == 0 {
			return nil, nil, false
		}
		anyOf(scope)
	}
	if len(anyTags) > 0 {
		anyOf(anyTags)
	}
	if all := dedupe(allTags); len(all) > 0 {
		where = append(where, `(SELECT COUNT(DISTINCT j.value) FROM `+s.d.jsonStrings(column)+
			` WHERE j.value IN (`+placeholders(len(all))+`)) = ?`)
		args = append(append(args, stringArgs(all)...), len(all))
	}
	return where, args, true
}
