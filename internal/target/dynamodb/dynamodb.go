// Package dynamotarget drives a DynamoDB-style managed service with YCSB
// workloads over the AWS SDK for Go v2: the "managed service capped near
// 400-430 ops/s" of seed 002 §V. One item per record: the key in the
// string hash key pk, each field a string attribute field0, field1, ...
// (seed 002 Table V: table, item, attribute-value; Get Item, Put Item,
// Scan).
//
// The service is a DynamoDB Local Headroom runs (managed, internal/deploy),
// one at an endpoint, or Amazon DynamoDB. The table is created in Prepare,
// on-demand or with provisioned read and write capacity; because DynamoDB
// Local does not enforce provisioned capacity, the target holds requests
// to it itself (capacity.go) and fails the excess as the service does,
// with a ProvisionedThroughputExceededException of kind "throttled".
package dynamotarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:       "dynamodb",
		Summary:    "DynamoDB service (managed: a private DynamoDB Local; or an endpoint, or AWS), YCSB records as items, provisioned capacity emulated",
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		Open: func(o any, env registry.Env) (target.Target, error) {
			opts := *o.(*Options)
			m, err := env.Managed(opts.Managed)
			if err != nil {
				return nil, fmt.Errorf("dynamodb target: %w", err)
			}
			opts.Managed = m
			return Open(opts, env)
		},
	})
}

// Target is a client of one DynamoDB service and one table.
type Target struct {
	opts     Options
	db       *dynamodb.Client
	endpoint string // "" = AWS's regional endpoint
	address  string // host:port the requests go to

	// Set by Prepare.
	fields     []string // field0, field1, ...
	fieldBytes int      // the fields' part of an item's size (capacity.go)
	reads      *bucket  // nil = not held to a capacity
	writes     *bucket
}

// Managed is a Target with its own DynamoDB Local.
type Managed struct {
	*Target
	inst *deploy.Instance
}

// Open connects to the service the options name, after starting it when
// they ask for a managed instance (in env.InstanceDir("dynamodb")). It
// returns a *Managed for a managed instance and a *Target otherwise.
func Open(opts Options, env registry.Env) (target.Target, error) {
	if opts.Managed == nil {
		return open(opts, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := deploy.Start(ctx, deploy.DynamoDB(), env.InstanceDir("dynamodb"), *opts.Managed)
	if err != nil {
		return nil, fmt.Errorf("dynamodb target: managed: %w", err)
	}
	t, err := open(opts, inst)
	if err != nil {
		_ = inst.Remove(context.Background())
		return nil, err
	}
	return &Managed{Target: t, inst: inst}, nil
}

func open(opts Options, inst *deploy.Instance) (*Target, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t := &Target{opts: opts, endpoint: opts.Endpoint}
	if inst != nil {
		t.endpoint = deploy.DynamoDBEndpoint(inst)
	}
	creds, err := t.credentials(ctx, inst)
	if err != nil {
		return nil, err
	}
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = opts.PoolSize
		tr.MaxIdleConnsPerHost = opts.PoolSize
	})
	cfg := aws.Config{
		Region:      opts.Region,
		Credentials: creds,
		HTTPClient:  httpClient,
		// A failed or throttled request is a measurement: the SDK must
		// not retry it behind the engine's back.
		Retryer: func() aws.Retryer { return aws.NopRetryer{} },
	}
	t.db = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if t.endpoint != "" {
			o.BaseEndpoint = aws.String(t.endpoint)
		}
	})
	t.address = endpointAddress(t.endpoint, opts.Region)
	if _, err := t.db.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}); err != nil {
		return nil, t.connectError(err)
	}
	return t, nil
}

// credentials picks the credentials (Options): dummy ones for DynamoDB
// Local, which does not check them; the named variables; the shared
// file; or the SDK's default chain for AWS.
func (t *Target) credentials(ctx context.Context, inst *deploy.Instance) (aws.CredentialsProvider, error) {
	o := t.opts
	switch {
	case inst != nil:
		return credentials.NewStaticCredentialsProvider(inst.User, inst.Password, ""), nil
	case o.AccessKeyEnv != "":
		id, secret, err := o.staticKeys()
		if err != nil {
			return nil, err
		}
		return credentials.NewStaticCredentialsProvider(id, secret, ""), nil
	case o.CredentialsFile == "" && o.Profile == "" && o.Endpoint != "":
		return credentials.NewStaticCredentialsProvider("headroom", "headroom", ""), nil
	}
	var load []func(*config.LoadOptions) error
	if o.CredentialsFile != "" {
		load = append(load, config.WithSharedCredentialsFiles([]string{o.CredentialsFile}))
	}
	if o.Profile != "" {
		load = append(load, config.WithSharedConfigProfile(o.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("dynamodb target: credentials: %v; check credentials_file and profile", err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("dynamodb target: no AWS credentials found (%v); name them with access_key_env and secret_key_env, or credentials_file and profile", err)
	}
	return cfg.Credentials, nil
}

// endpointAddress is the host:port requests go to.
func endpointAddress(endpoint, region string) string {
	if endpoint == "" {
		return net.JoinHostPort("dynamodb."+region+".amazonaws.com", "443")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// connectError explains a failed first request. The SDK's messages never
// hold the secret key.
func (t *Target) connectError(err error) error {
	where := t.endpoint
	if where == "" {
		where = "AWS DynamoDB in " + t.opts.Region
	}
	hint := ""
	switch {
	case target.IsConnectionError(err):
		hint = "; is the service running and is endpoint right?"
	case apiCode(err) == "UnrecognizedClientException" || apiCode(err) == "InvalidSignatureException":
		hint = "; the service rejected the credentials: check access_key_env and secret_key_env, or credentials_file and profile"
	}
	return fmt.Errorf("dynamodb target: cannot reach %s: %v%s", where, err, hint)
}

// Address implements target.Addresser: the service's host:port.
func (t *Target) Address() string { return t.address }

// Prepare checks the workload, creates the table (dropping it first when
// fresh) and sets up the capacity the requests are held to.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.IsStatements() {
		return errors.New("workload.statements: the dynamodb target runs YCSB workloads, not SQL statements; use a YCSB workload, or the sqlite, postgres or mysql target")
	}
	fields := make([]string, w.FieldCount)
	fieldBytes := 0
	for i := range fields {
		fields[i] = fmt.Sprintf("%s%d", fieldAttrs, i)
		fieldBytes += len(fields[i]) + w.FieldLength
	}
	t.fields, t.fieldBytes = fields, fieldBytes
	if err := t.ensureTable(ctx, fresh); err != nil {
		return err
	}
	t.reads, t.writes = nil, nil
	if !t.opts.emulate() || !t.opts.provisioned() {
		return nil
	}
	t.reads = newBucket(t.opts.ReadCapacity, t.opts.Burst.Duration, "table's provisioned read capacity")
	t.writes = newBucket(t.opts.WriteCapacity, t.opts.Burst.Duration, "table's provisioned write capacity")
	// The largest request of the workload must fit in the bucket, or it
	// could never be admitted.
	size := len(keyAttr) + maxKeyLen + fieldBytes
	if c := writeCost(size); (w.Mix[workload.Update] > 0 || w.Mix[workload.Insert] > 0 || w.Mix[workload.ReadModifyWrite] > 0) && !t.writes.fits(c) {
		return fmt.Errorf("write_capacity: %d units per second with a burst of %v cannot admit one write of a %d-byte record (%d units); raise write_capacity or burst, or shorten the records", t.opts.WriteCapacity, t.opts.Burst.Duration, size, c/milli)
	}
	reads := readCost(size, t.opts.ConsistentReads)
	if w.Mix[workload.Scan] > 0 {
		reads = max(reads, readCost(size*w.MaxScanLength, t.opts.ConsistentReads))
	}
	if (w.Mix[workload.Read] > 0 || w.Mix[workload.Scan] > 0 || w.Mix[workload.ReadModifyWrite] > 0) && !t.reads.fits(reads) {
		return fmt.Errorf("read_capacity: %d units per second with a burst of %v cannot admit the workload's largest read (%.1f units); raise read_capacity or burst, or shorten the records or scans", t.opts.ReadCapacity, t.opts.Burst.Duration, float64(reads)/milli)
	}
	return nil
}

// maxKeyLen bounds a YCSB key's length ("user" and up to 20 digits).
const maxKeyLen = 24

// ensureTable creates the table unless it exists (fresh: drops it first)
// and waits until it is active.
func (t *Target) ensureTable(ctx context.Context, fresh bool) error {
	name := aws.String(t.opts.Table)
	_, err := t.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: name})
	exists := err == nil
	if err != nil && apiCode(err) != "ResourceNotFoundException" {
		return fmt.Errorf("dynamodb target: describing table %s: %w", t.opts.Table, classify(err))
	}
	if exists && !fresh {
		return nil
	}
	if exists {
		if _, err := t.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: name}); err != nil {
			return fmt.Errorf("dynamodb target: dropping table %s: %w", t.opts.Table, classify(err))
		}
		if err := dynamodb.NewTableNotExistsWaiter(t.db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: name}, 5*time.Minute); err != nil {
			return fmt.Errorf("dynamodb target: waiting for table %s to go: %w", t.opts.Table, err)
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(keyAttr), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(keyAttr), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}
	if t.opts.provisioned() {
		in.BillingMode = types.BillingModeProvisioned
		in.ProvisionedThroughput = &types.ProvisionedThroughput{
			ReadCapacityUnits:  aws.Int64(int64(t.opts.ReadCapacity)),
			WriteCapacityUnits: aws.Int64(int64(t.opts.WriteCapacity)),
		}
	}
	if _, err := t.db.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("dynamodb target: creating table %s: %w", t.opts.Table, classify(err))
	}
	if err := dynamodb.NewTableExistsWaiter(t.db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: name}, 5*time.Minute); err != nil {
		return fmt.Errorf("dynamodb target: waiting for table %s to become active: %w", t.opts.Table, err)
	}
	return nil
}

// NewClient returns a client for one request slot; all clients share the
// SDK client, its connections and the capacity buckets.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	if t.fields == nil {
		return nil, errors.New("dynamodb target: Prepare must run before clients are opened")
	}
	return newClient(t), nil
}

// Close releases the SDK client's idle connections.
func (t *Target) Close() error {
	if c, ok := t.db.Options().HTTPClient.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return nil
}

// Close closes the connections, then stops and removes the managed
// instance (its log stays).
func (m *Managed) Close() error {
	_ = m.Target.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return m.inst.Remove(ctx)
}

// Instance is the managed server.
func (m *Managed) Instance() *deploy.Instance { return m.inst }

// ServerPIDs implements target.ServerProcesses.
func (m *Managed) ServerPIDs() []int {
	if pid := m.inst.PID(); pid > 0 {
		return []int{pid}
	}
	return nil
}

// Ephemeral implements target.Ephemeral: each session starts its own
// empty service, so a resumed campaign populates it again.
func (m *Managed) Ephemeral() bool { return true }

// Restart implements target.Restarter. A service whose tables live in a
// file keeps them; an in-memory one would come back empty, so it refuses.
func (m *Managed) Restart(ctx context.Context) error {
	if inMemory, _ := strconv.ParseBool(m.inst.Settings["in_memory"]); inMemory {
		return errors.New("dynamodb target: a restart empties an in-memory DynamoDB Local (managed.settings.in_memory: true); use reset: none or a file-backed service")
	}
	if err := m.inst.Restart(ctx); err != nil {
		return fmt.Errorf("dynamodb target: restarting the managed server: %w", err)
	}
	return nil
}

// StartServer implements target.ServerStarter: it starts the service
// again when it is not running (after a kill event).
func (m *Managed) StartServer(ctx context.Context) error {
	if m.inst.Running() {
		return nil
	}
	return m.inst.Restart(ctx)
}
