package coordination

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// SetRedisLogger routes go-redis' own messages (dial failures, dropped
// pub/sub messages), which it otherwise prints to stderr, to logger at warn
// level. go-redis keeps one logger per process, so main calls this once.
func SetRedisLogger(logger *zap.Logger) {
	redis.SetLogger(redisLogger{logger: logger.Named("go-redis")})
}

type redisLogger struct{ logger *zap.Logger }

// Printf implements go-redis' internal logging interface. The formatted
// text is a field, keeping the message constant.
func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.logger.Warn("redis client", zap.String("detail", fmt.Sprintf(format, v...)))
}
