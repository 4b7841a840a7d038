package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DynamoDB is the recipe for a private DynamoDB Local server: Amazon's
// emulation of the DynamoDB service (seed 002 §V's managed service), a
// Java program from Maven Central (deps/jars/dynamodb) that keeps its
// tables in SQLite through sqlite4java. Init writes the JVM's command
// line to Dir/dynamodb.args (a java @argfile, so the command is on
// record and short in ps):
//
//	-Xms<heap> -Xmx<heap>               a fixed heap (managed.settings.heap, default 512m)
//	-XX:+ExitOnOutOfMemoryError         a server out of heap exits instead of limping on
//	-Djava.library.path=<jar dir>       where sqlite4java finds libsqlite4java-linux-amd64-*.so
//	-Djava.io.tmpdir=<Dir>/tmp          temporary files stay in the instance directory
//	-cp <every jar of the set>
//	com.amazonaws.services.dynamodbv2.local.main.ServerRunner
//	    -port <port> -sharedDb -disableTelemetry (-dbPath <data dir> | -inMemory)
//
// -sharedDb keeps one database whatever the client's credentials and
// region (DynamoDB Local otherwise keeps one per access key and region),
// -disableTelemetry keeps it from sending usage data to Amazon. By default
// the tables live in a file in the data directory (on the lab host's
// volume when placed there, so the volume's limits apply);
// managed.settings.in_memory: true keeps them in memory. DynamoDB Local
// has no option for the address it listens on: it listens on every
// address of its host (on a lab host, of that host's network namespace
// only). It does not check credentials or enforce provisioned throughput;
// the dynamodb target emulates the latter (internal/target/dynamodb).
func DynamoDB() Recipe { return dynamoRecipe{} }

type dynamoRecipe struct{}

// DynamoDBJars is the jar set of DynamoDB Local (deps/jars/dynamodb).
const DynamoDBJars = "dynamodb"

// dynamoMain is DynamoDB Local's entry point.
const dynamoMain = "com.amazonaws.services.dynamodbv2.local.main.ServerRunner"

func (dynamoRecipe) Kind() string { return "dynamodb" }

// User: no Debian package makes a dynamodb account; nobody runs it then.
func (dynamoRecipe) User() string { return "dynamodb" }

func (dynamoRecipe) Binaries() []Binary {
	var dirs []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "bin"))
	}
	return []Binary{{Name: "java", Dirs: dirs, Package: "openjdk-17-jre-headless"}}
}

// The managed.settings a DynamoDB Local instance takes.
var dynamoSettings = map[string]string{
	"heap":                     "the JVM heap, e.g. 512m or 2g",
	"in_memory":                "true keeps the tables in memory instead of a file in the data directory",
	"delay_transient_statuses": "true makes table and index changes take time, as in the service",
}

// DefaultDynamoDBHeap is the JVM heap when managed.settings.heap is not set.
const DefaultDynamoDBHeap = "512m"

var heapSize = regexp.MustCompile(`^[1-9][0-9]*[kKmMgG]$`)

// CheckDynamoDBSettings reports the first managed.settings entry a
// DynamoDB Local instance cannot take, in name order.
func CheckDynamoDBSettings(settings map[string]string) error {
	for _, k := range sortedKeys(settings) {
		v := settings[k]
		if _, ok := dynamoSettings[k]; !ok {
			return fmt.Errorf("managed.settings: %q is not a DynamoDB Local setting; use %s", truncateName(k), strings.Join(sortedKeys(dynamoSettings), ", "))
		}
		switch k {
		case "heap":
			if !heapSize.MatchString(v) {
				return fmt.Errorf("managed.settings.heap: %q is not a JVM heap size; write it like 512m or 2g", v)
			}
		default:
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("managed.settings.%s: %q is not true or false", k, v)
			}
		}
	}
	return nil
}

// dynamoFlag is a boolean setting (checked by CheckDynamoDBSettings).
func dynamoFlag(settings map[string]string, k string) bool {
	b, _ := strconv.ParseBool(settings[k])
	return b
}

// dynamoArgsPath is the instance's java @argfile.
func dynamoArgsPath(inst *Instance) string { return filepath.Join(inst.Dir, "dynamodb.args") }

// DynamoDBArgs are the JVM options and program arguments of inst, as
// Init writes them; cp is the class path and lib the directory of the
// native library.
func DynamoDBArgs(inst *Instance, cp, lib string) []string {
	heap := inst.Settings["heap"]
	if heap == "" {
		heap = DefaultDynamoDBHeap
	}
	args := []string{
		"-Xms" + heap, "-Xmx" + heap,
		"-XX:+ExitOnOutOfMemoryError",
		"-Djava.library.path=" + lib,
		"-Djava.io.tmpdir=" + filepath.Join(inst.Dir, "tmp"),
		"-cp", cp,
		dynamoMain,
		"-port", strconv.Itoa(inst.Port), "-sharedDb", "-disableTelemetry",
	}
	if dynamoFlag(inst.Settings, "in_memory") {
		args = append(args, "-inMemory")
	} else {
		args = append(args, "-dbPath", inst.DataDir())
	}
	if dynamoFlag(inst.Settings, "delay_transient_statuses") {
		args = append(args, "-delayTransientStatuses")
	}
	return args
}

func (dynamoRecipe) Init(_ context.Context, inst *Instance) error {
	if err := CheckDynamoDBSettings(inst.Settings); err != nil {
		return err
	}
	cp, err := Classpath(DynamoDBJars)
	if err != nil {
		return err
	}
	lib, _ := JarDir(DynamoDBJars)
	if so, _ := filepath.Glob(filepath.Join(lib, "libsqlite4java-linux-*.so")); len(so) == 0 {
		return fmt.Errorf("%w: the sqlite4java native library (libsqlite4java-linux-*.so) is not in %s; run scripts/fetch-jars.sh %s again", ErrMissingJars, lib, DynamoDBJars)
	}
	// DynamoDB Local does not check credentials; these are what the
	// target signs its requests with.
	inst.User, inst.Database = "headroom", ""
	for _, d := range []string{inst.DataDir(), filepath.Join(inst.Dir, "tmp")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	// An argfile takes one argument per line; none of these holds a
	// space or a quote (the paths are Headroom's own directories).
	var b strings.Builder
	for _, a := range DynamoDBArgs(inst, cp, lib) {
		if strings.ContainsAny(a, " \t\n\"'#") {
			return fmt.Errorf("the DynamoDB Local argument %q holds a space or quote; move the results directory (output:) or the jar cache (HEADROOM_JAR_CACHE) to a path without one", a)
		}
		b.WriteString(a)
		b.WriteByte('\n')
	}
	return os.WriteFile(dynamoArgsPath(inst), []byte(b.String()), 0o644)
}

func (dynamoRecipe) Command(inst *Instance) (string, []string) {
	return inst.Bin("java"), []string{"@" + dynamoArgsPath(inst)}
}

// DynamoDBEndpoint is the URL clients send DynamoDB requests to.
func DynamoDBEndpoint(inst *Instance) string { return "http://" + inst.Addr() }

// Ready sends ListTables and expects a 200 answer. DynamoDB Local wants a
// signed-looking request but does not check the signature.
func (dynamoRecipe) Ready(ctx context.Context, inst *Instance) error {
	_, err := DynamoDBCall(ctx, inst, "ListTables", "{}")
	return err
}

// DynamoDBCall sends one DynamoDB API request (operation, e.g.
// "ListTables", with its JSON body) to the instance and returns the JSON
// answer. It is for setup and checks; the workload goes through the AWS
// SDK in the dynamodb target.
func DynamoDBCall(ctx context.Context, inst *Instance, operation, body string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, DynamoDBEndpoint(inst)+"/", bytes.NewBufferString(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+operation)
	day := time.Now().UTC().Format("20060102")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+inst.User+"/"+day+"/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-target, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("DynamoDB Local answered %s with %s: %.200s", operation, resp.Status, out)
	}
	return out, nil
}
