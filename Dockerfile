# syntax=docker/dockerfile:1
# Build: make docker (stamps version, commit, date)   Run: docker compose up (see docker-compose.yml)

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so source edits reuse the module cache layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build stamp (`qhronosd version`, /status): `make docker` passes them
# from git, which the build context leaves out. Empty = "dev".
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
# CGO off: SQLite is modernc.org/sqlite (pure Go) and zone data is embedded
# (time/tzdata), so the binary is static and needs nothing from the image.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w \
      -X github.com/qhronos/qhronos/internal/buildinfo.version=${VERSION} \
      -X github.com/qhronos/qhronos/internal/buildinfo.commit=${COMMIT} \
      -X github.com/qhronos/qhronos/internal/buildinfo.date=${DATE}" \
      -o /out/qhronosd ./cmd/qhronosd \
 && /out/qhronosd version

# Alpine rather than distroless: busybox wget gives the HEALTHCHECK a probe.
FROM alpine:3.20
RUN apk add --no-cache ca-certificates \
 && addgroup -S -g 10001 qhronos \
 && adduser -S -D -H -u 10001 -G qhronos qhronos \
 && mkdir -p /data && chown qhronos:qhronos /data && chmod 0700 /data
COPY --from=build /out/qhronosd /usr/local/bin/qhronosd
USER 10001:10001
# Listen on all interfaces inside the container; the data dir holds SQLite,
# the lock and generated secrets when no database.url is given.
ENV QHRONOS_SERVER_ADDR=0.0.0.0:8080 \
    QHRONOS_SERVER_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD wget -q -O /dev/null http://127.0.0.1:8080/health || exit 1
ENTRYPOINT ["/usr/local/bin/qhronosd"]
CMD ["serve"]
