// Command otlp-sink is the OTLP/HTTP trace receiver of the tracing benchmark
// (BENCHMARKS.md): it decodes every export request, counts the spans (GET
// /count) and drops them. Usage: go run ./bench/otlp-sink 127.0.0.1:18391
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func main() {
	var spans atomic.Int64
	http.HandleFunc("/v1/traces", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans.Add(int64(len(ss.Spans)))
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	http.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, spans.Load()) })
	if err := http.ListenAndServe(os.Args[1], nil); err != nil {
		panic(err)
	}
}
