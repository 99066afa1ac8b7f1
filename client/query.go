package client

import (
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// encodeQuery turns a generated *Params struct into query values, by its
// form tags: nil pointers are left out, lists repeat, times are RFC 3339.
func encodeQuery(params any) url.Values {
	q := url.Values{}
	v := reflect.ValueOf(params)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return q
		}
		v = v.Elem()
	}
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("form"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		}
		addValue(q, name, f)
	}
	return q
}

func addValue(q url.Values, name string, f reflect.Value) {
	if tm, ok := f.Interface().(time.Time); ok {
		q.Add(name, tm.UTC().Format(time.RFC3339Nano))
		return
	}
	switch f.Kind() {
	case reflect.Slice:
		for j := range f.Len() {
			addValue(q, name, f.Index(j))
		}
	case reflect.String:
		q.Add(name, f.String())
	case reflect.Int, reflect.Int64, reflect.Int32:
		q.Add(name, strconv.FormatInt(f.Int(), 10))
	case reflect.Bool:
		q.Add(name, strconv.FormatBool(f.Bool()))
	}
}
