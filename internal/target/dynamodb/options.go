package dynamotarget

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the dynamodb target's spec fields (docs/clusters.md). The
// service is a managed DynamoDB Local (managed:), a DynamoDB-compatible
// endpoint (endpoint:), or, with neither, Amazon DynamoDB in region.
type Options struct {
	// Endpoint is the service's URL, e.g. http://127.0.0.1:8000 for a
	// DynamoDB Local someone else runs ("" = managed's, or AWS's own).
	Endpoint string `yaml:"endpoint"`
	// Region signs the requests and, without an endpoint, picks AWS's
	// (default us-east-1).
	Region string `yaml:"region"`
	// Table is the table of the records (default usertable, YCSB's).
	Table string `yaml:"table"`
	// ReadCapacity and WriteCapacity are the table's provisioned
	// throughput in read and write capacity units per second; both 0
	// (default) = on-demand (PAY_PER_REQUEST), with no admission limit.
	ReadCapacity  int `yaml:"read_capacity"`
	WriteCapacity int `yaml:"write_capacity"`
	// Burst is how much unused capacity the emulated table keeps, as time
	// at the provisioned rate (default 300s, DynamoDB's; at least 1s).
	Burst spec.Duration `yaml:"burst"`
	// EmulateCapacity makes Headroom hold the requests to the provisioned
	// capacity itself (capacity.go), because DynamoDB Local does not.
	// Default: on for a managed service or an endpoint, off for AWS's own
	// endpoint, which enforces it.
	EmulateCapacity *bool `yaml:"emulate_capacity"`
	// ConsistentReads makes reads and scans strongly consistent (1 read
	// unit per 4 KB instead of 0.5).
	ConsistentReads bool `yaml:"consistent_reads"`
	// AccessKeyEnv and SecretKeyEnv name environment variables that hold
	// the credentials. CredentialsFile is an AWS shared credentials file
	// and Profile its section. Without any of them a managed service or an
	// endpoint gets dummy credentials (DynamoDB Local does not check
	// them), and AWS's endpoint the SDK's default chain (AWS_* variables,
	// ~/.aws). Credentials are never logged or stored.
	AccessKeyEnv    string `yaml:"access_key_env"`
	SecretKeyEnv    string `yaml:"secret_key_env"`
	CredentialsFile string `yaml:"credentials_file"`
	Profile         string `yaml:"profile"`
	// PoolSize is how many idle HTTP connections the target keeps to the
	// service (default 64); requests beyond it open new ones.
	PoolSize int `yaml:"pool_size"`
	// Managed runs a private DynamoDB Local for the campaign.
	Managed *deploy.Managed `yaml:"managed"`
}

// DefaultBurst is DynamoDB's burst capacity: it keeps up to five minutes
// of unused read and write capacity.
const DefaultBurst = 300 * time.Second

func defaultOptions() *Options {
	return &Options{Region: "us-east-1", Table: "usertable", Burst: spec.Duration{Duration: DefaultBurst}, PoolSize: 64}
}

// emulate is whether Headroom enforces the provisioned capacity.
func (o *Options) emulate() bool {
	if o.EmulateCapacity != nil {
		return *o.EmulateCapacity
	}
	return o.Managed != nil || o.Endpoint != ""
}

// provisioned is whether the table has provisioned throughput.
func (o *Options) provisioned() bool { return o.ReadCapacity > 0 || o.WriteCapacity > 0 }

var (
	tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxCapacity bounds the capacity options: DynamoDB's default account
// quota per table is 40,000 units.
const maxCapacity = 40000

func validate(o any) error {
	opts := o.(*Options)
	if opts.Managed != nil {
		if opts.Endpoint != "" {
			return fmt.Errorf("endpoint: a managed DynamoDB Local has its own endpoint; remove endpoint or remove managed")
		}
		if m := opts.Managed; m.Port < 0 || m.Port > 65535 {
			return fmt.Errorf("managed.port: %d is out of range; use 1 to 65535, or 0 for a free port", m.Port)
		}
		if err := deploy.CheckDynamoDBSettings(opts.Managed.Settings); err != nil {
			return err
		}
	}
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint: %q is not an http(s) URL; write it like http://127.0.0.1:8000", opts.Endpoint)
		}
	}
	if opts.Region == "" {
		return fmt.Errorf("region: must be set, e.g. us-east-1")
	}
	if !tableName.MatchString(opts.Table) {
		return fmt.Errorf("table: %q is not a DynamoDB table name; use 3 to 255 of: letters, digits, underscore, hyphen, dot", opts.Table)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"read_capacity", opts.ReadCapacity}, {"write_capacity", opts.WriteCapacity}} {
		if f.v < 0 || f.v > maxCapacity {
			return fmt.Errorf("%s: %d is outside 0..%d capacity units per second", f.name, f.v, maxCapacity)
		}
	}
	if opts.provisioned() && (opts.ReadCapacity == 0 || opts.WriteCapacity == 0) {
		return fmt.Errorf("read_capacity: a provisioned table needs both read_capacity and write_capacity of at least 1 (both 0 = on-demand); set the other one")
	}
	if opts.Burst.Duration < time.Second {
		return fmt.Errorf("burst: %v is under 1s; the provisioned rate is a budget per second, so the table keeps at least one second of it", opts.Burst.Duration)
	}
	if opts.EmulateCapacity != nil && *opts.EmulateCapacity && !opts.provisioned() {
		return fmt.Errorf("emulate_capacity: an on-demand table has no capacity to emulate; set read_capacity and write_capacity")
	}
	for _, f := range []struct{ name, v string }{{"access_key_env", opts.AccessKeyEnv}, {"secret_key_env", opts.SecretKeyEnv}} {
		if f.v != "" && !envName.MatchString(f.v) {
			return fmt.Errorf("%s: %q is not an environment variable name; use letters, digits and underscores", f.name, f.v)
		}
	}
	if (opts.AccessKeyEnv == "") != (opts.SecretKeyEnv == "") {
		return fmt.Errorf("access_key_env: give both access_key_env and secret_key_env, or neither")
	}
	if opts.AccessKeyEnv != "" && (opts.CredentialsFile != "" || opts.Profile != "") {
		return fmt.Errorf("credentials_file: give the credentials either through access_key_env and secret_key_env or through credentials_file and profile, not both")
	}
	if opts.Managed != nil && (opts.AccessKeyEnv != "" || opts.CredentialsFile != "" || opts.Profile != "") {
		return fmt.Errorf("managed: a managed DynamoDB Local takes no credentials; remove access_key_env, secret_key_env, credentials_file and profile")
	}
	if opts.PoolSize < 1 || opts.PoolSize > 10000 {
		return fmt.Errorf("pool_size: must be at least 1 (and at most 10000), got %d", opts.PoolSize)
	}
	return nil
}

// staticKeys reads the credentials from the variables access_key_env and
// secret_key_env name. Errors name the variable, never its value.
func (o *Options) staticKeys() (id, secret string, err error) {
	for _, f := range []struct {
		field, name string
		dst         *string
	}{{"access_key_env", o.AccessKeyEnv, &id}, {"secret_key_env", o.SecretKeyEnv, &secret}} {
		v, ok := os.LookupEnv(f.name)
		if !ok || v == "" {
			return "", "", fmt.Errorf("%s: the environment variable %s is not set; export it before running", f.field, f.name)
		}
		*f.dst = v
	}
	return id, secret, nil
}
