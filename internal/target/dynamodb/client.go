package dynamotarget

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// The YCSB operations as DynamoDB requests:
//
//	read               GetItem of the key (one field: ProjectionExpression)
//	insert             PutItem of the whole item
//	update             UpdateItem SET of the written fields, on the
//	                   condition attribute_exists(pk): a missing record is
//	                   not_found, as for the SQL targets, not created
//	scan               Scan with Limit = the scan length and
//	                   ExclusiveStartKey = the start key: the items that
//	                   follow the key in the table's (hash) order, as
//	                   YCSB's DynamoDB binding scans
//	read_modify_write  GetItem, then the update
//
// Reads and scans are eventually consistent unless consistent_reads is
// set. Each request is first admitted by the table's capacity bucket for
// its direction (capacity.go), at the cost of a whole record.
//
// The client keeps one input value per request kind and the maps inside
// them, and points them at the op's key and values before each call.
type client struct {
	t   *Target
	db  *dynamodb.Client
	key map[string]types.AttributeValue
	kv  *types.AttributeValueMemberS

	get     dynamodb.GetItemInput
	put     dynamodb.PutItemInput
	putVals []*types.AttributeValueMemberS
	upd     dynamodb.UpdateItemInput
	updVals []*types.AttributeValueMemberS // every field's value, or [0] for one field
	scan    dynamodb.ScanInput

	// The update's expressions, for all fields and per field.
	setAll  string
	setOne  []string
	valsAll map[string]types.AttributeValue
	valOne  map[string]types.AttributeValue
	limit   int32
}

func newClient(t *Target) *client {
	table := aws.String(t.opts.Table)
	consistent := aws.Bool(t.opts.ConsistentReads)
	c := &client{t: t, db: t.db, kv: &types.AttributeValueMemberS{}}
	c.key = map[string]types.AttributeValue{keyAttr: c.kv}
	c.get = dynamodb.GetItemInput{TableName: table, Key: c.key, ConsistentRead: consistent}
	c.scan = dynamodb.ScanInput{TableName: table, ExclusiveStartKey: c.key, ConsistentRead: consistent, Limit: &c.limit}

	item := map[string]types.AttributeValue{keyAttr: c.kv}
	c.putVals = make([]*types.AttributeValueMemberS, len(t.fields))
	c.updVals = make([]*types.AttributeValueMemberS, len(t.fields))
	c.valsAll = make(map[string]types.AttributeValue, len(t.fields))
	c.setOne = make([]string, len(t.fields))
	sets := make([]string, len(t.fields))
	for i, f := range t.fields {
		c.putVals[i] = &types.AttributeValueMemberS{}
		item[f] = c.putVals[i]
		c.updVals[i] = &types.AttributeValueMemberS{}
		name := fmt.Sprintf(":v%d", i)
		c.valsAll[name] = c.updVals[i]
		sets[i] = f + " = " + name
		c.setOne[i] = "SET " + f + " = :v"
	}
	c.setAll = "SET " + strings.Join(sets, ", ")
	c.valOne = map[string]types.AttributeValue{":v": c.updVals[0]}
	c.put = dynamodb.PutItemInput{TableName: table, Item: item}
	c.upd = dynamodb.UpdateItemInput{TableName: table, Key: c.key, ConditionExpression: aws.String("attribute_exists(" + keyAttr + ")")}
	return c
}

// size is the DynamoDB size of op's record.
func (c *client) size(op *workload.Op) int { return len(keyAttr) + len(op.Key) + c.t.fieldBytes }

func (c *client) Do(ctx context.Context, op *workload.Op) error {
	c.kv.Value = string(op.Key)
	switch op.Type {
	case workload.Read:
		return c.read(ctx, op)
	case workload.Insert:
		if err := c.t.writes.admit(writeCost(c.size(op))); err != nil {
			return err
		}
		for i, v := range c.putVals {
			v.Value = string(op.Values[i])
		}
		_, err := c.db.PutItem(ctx, &c.put)
		return classify(err)
	case workload.Update:
		return c.update(ctx, op)
	case workload.Scan:
		return c.doScan(ctx, op)
	case workload.ReadModifyWrite:
		if err := c.read(ctx, op); err != nil {
			return err
		}
		return c.update(ctx, op)
	}
	return fmt.Errorf("dynamodb target: operation %v is not a YCSB operation", op.Type)
}

// projection is the ProjectionExpression of a one-field read (nil = all).
func (c *client) projection(op *workload.Op) *string {
	if op.Field >= 0 && op.Field < len(c.t.fields) {
		return &c.t.fields[op.Field]
	}
	return nil
}

func (c *client) read(ctx context.Context, op *workload.Op) error {
	if err := c.t.reads.admit(readCost(c.size(op), c.t.opts.ConsistentReads)); err != nil {
		return err
	}
	c.get.ProjectionExpression = c.projection(op)
	out, err := c.db.GetItem(ctx, &c.get)
	if err != nil {
		return classify(err)
	}
	if len(out.Item) == 0 {
		return target.ErrNotFound
	}
	return nil
}

func (c *client) update(ctx context.Context, op *workload.Op) error {
	if err := c.t.writes.admit(writeCost(c.size(op))); err != nil {
		return err
	}
	if op.Field >= 0 && op.Field < len(c.t.fields) {
		c.updVals[0].Value = string(op.Values[op.Field])
		c.upd.UpdateExpression = &c.setOne[op.Field]
		c.upd.ExpressionAttributeValues = c.valOne
	} else {
		for i, v := range c.updVals {
			v.Value = string(op.Values[i])
		}
		c.upd.UpdateExpression = &c.setAll
		c.upd.ExpressionAttributeValues = c.valsAll
	}
	_, err := c.db.UpdateItem(ctx, &c.upd)
	if apiCode(err) == "ConditionalCheckFailedException" {
		return target.ErrNotFound
	}
	return classify(err)
}

func (c *client) doScan(ctx context.Context, op *workload.Op) error {
	n := max(op.ScanLength, 1)
	if err := c.t.reads.admit(readCost(n*c.size(op), c.t.opts.ConsistentReads)); err != nil {
		return err
	}
	c.limit = int32(n)
	c.scan.ProjectionExpression = c.projection(op)
	_, err := c.db.Scan(ctx, &c.scan)
	return classify(err)
}

func (c *client) Close() error { return nil }

// batchMax is the most items one BatchWriteItem takes.
const batchMax = 25

// LoadBatch implements target.Loader with BatchWriteItem, 25 items a
// request, sending again what the service left unprocessed. Loading is
// not held to the write capacity: the table is filled as an import from
// S3 fills one, which uses none.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	for len(ops) > 0 {
		n := min(len(ops), batchMax)
		reqs := make([]types.WriteRequest, n)
		for i, op := range ops[:n] {
			item := make(map[string]types.AttributeValue, len(c.t.fields)+1)
			item[keyAttr] = &types.AttributeValueMemberS{Value: string(op.Key)}
			for j, f := range c.t.fields {
				item[f] = &types.AttributeValueMemberS{Value: string(op.Values[j])}
			}
			reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
		}
		pending := map[string][]types.WriteRequest{c.t.opts.Table: reqs}
		for wait := 10 * time.Millisecond; len(pending) > 0; wait = min(2*wait, time.Second) {
			out, err := c.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil && !throttleCodes[apiCode(err)] {
				return fmt.Errorf("dynamodb target: loading records: %w", classify(err))
			}
			if err == nil {
				pending = out.UnprocessedItems
			}
			if len(pending) == 0 {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		ops = ops[n:]
	}
	return nil
}

var _ target.Loader = (*client)(nil)
