//go:build tools

package tools

import _ "github.com/helm-unittest/helm-unittest/cmd/helm-unittest"
