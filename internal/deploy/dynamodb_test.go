package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dynamoMissing = "DynamoDB Local is not available (needs java from openjdk-17-jre-headless and `make deps`)"

// TestDynamoDBLocalStoresItems starts DynamoDB Local with its tables in a
// file and in memory, and writes and reads an item in each: that needs the
// sqlite4java native library, which the JVM loads only when a table is
// used. The file-backed one must keep the item over a restart.
func TestDynamoDBLocalStoresItems(t *testing.T) {
	for _, inMemory := range []bool{false, true} {
		name := "file"
		if inMemory {
			name = "memory"
		}
		t.Run(name, func(t *testing.T) {
			settings := map[string]string{"heap": "256m"}
			if inMemory {
				settings["in_memory"] = "true"
			}
			inst, err := startServer(t, DynamoDB(), "dynamodb", dynamoMissing, Managed{Settings: settings})
			if err != nil {
				t.Fatal(err)
			}
			args, err := os.ReadFile(dynamoArgsPath(inst))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(args), "\n-inMemory\n"); got != inMemory {
				t.Fatalf("-inMemory in the argfile = %v, want %v:\n%s", got, inMemory, args)
			}
			ctx := context.Background()
			call := func(op, body string) string {
				t.Helper()
				out, err := DynamoDBCall(ctx, inst, op, body)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			call("CreateTable", `{"TableName":"items","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],`+
				`"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}`)
			call("PutItem", `{"TableName":"items","Item":{"pk":{"S":"k1"},"field0":{"S":"v1"}}}`)
			if inMemory {
				if got := call("GetItem", `{"TableName":"items","Key":{"pk":{"S":"k1"}}}`); !strings.Contains(got, `"v1"`) {
					t.Fatalf("GetItem answered %s, want the item with v1", got)
				}
				return
			}
			if files, _ := filepath.Glob(filepath.Join(inst.DataDir(), "*.db")); len(files) != 1 {
				t.Fatalf("data directory holds %v, want one database file", files)
			}
			if err := inst.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if got := call("GetItem", `{"TableName":"items","Key":{"pk":{"S":"k1"}}}`); !strings.Contains(got, `"v1"`) {
				t.Fatalf("GetItem after a restart answered %s, want the item with v1", got)
			}
		})
	}
}

func TestCheckDynamoDBSettings(t *testing.T) {
	for _, c := range []struct {
		settings map[string]string
		want     string // "" = accepted
	}{
		{map[string]string{"heap": "1g", "in_memory": "true", "delay_transient_statuses": "false"}, ""},
		{map[string]string{"heap": "1 GB"}, "managed.settings.heap: \"1 GB\" is not a JVM heap size"},
		{map[string]string{"in_memory": "yes"}, "managed.settings.in_memory: \"yes\" is not true or false"},
		{map[string]string{"port": "1"}, "managed.settings: \"port\" is not a DynamoDB Local setting; use delay_transient_statuses, heap, in_memory"},
	} {
		err := CheckDynamoDBSettings(c.settings)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("%v: got %v, want %q", c.settings, err, c.want)
		}
	}
}
