package main_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// TestRefusedLoginExits: a password Iggy refuses makes the binary exit 1
// after max_login_attempts refused logins, saying the server refused the
// login of which user at which address, without showing the password; on
// both dialects.
func TestRefusedLoginExits(t *testing.T) {
	const password = "wrong-secret-73"
	for name, v := range map[string]iggytest.Version{"0.8": iggytest.Version08, "0.9": iggytest.Version09} {
		t.Run(name, func(t *testing.T) {
			srv, err := iggytest.Start(iggytest.Options{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			path := pipelineConfig(t, srv.Addr(), 5)
			conf, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			conf = []byte(strings.Replace(string(conf), "password: iggy", "password: "+password+"\n    max_login_attempts: 2", 1))
			if err := os.WriteFile(path, conf, 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := e2e.Start(bin, nil, "run", path)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Wait(30 * time.Second)
			out := p.Output()
			if code := exitCode(err); code != 1 {
				t.Fatalf("exit %v (code %d), want 1; output:\n%s", err, code, out)
			}
			want := fmt.Sprintf(`fluss-iggy: stopped: the Iggy server at %s refused the login as "iggy"`, srv.Addr())
			for _, w := range []string{want, "refused 2 times in a row (max_login_attempts: 2)"} {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, password) {
				t.Errorf("the output shows the password:\n%s", out)
			}
			if n := srv.MessageCount("s", "t"); n != 0 {
				t.Errorf("%d messages stored", n)
			}
			t.Logf("exited after %v with %v; last lines:\n%s", p.Elapsed().Round(time.Millisecond), err, p.Tail(3))
		})
	}
}
