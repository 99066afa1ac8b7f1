package main

import (
	"testing"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }
