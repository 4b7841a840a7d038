package mysql

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/headroom-dev/headroom/internal/target"
)

// Server error numbers that name an error kind (MySQL and MariaDB share
// them, except where noted).
var kinds = map[uint16]string{
	1213: target.KindDeadlock,   // ER_LOCK_DEADLOCK: InnoDB rolled the transaction back
	1205: target.KindBusy,       // ER_LOCK_WAIT_TIMEOUT: a row lock was not granted within innodb_lock_wait_timeout
	1040: target.KindBusy,       // ER_CON_COUNT_ERROR: too many connections
	1203: target.KindBusy,       // ER_TOO_MANY_USER_CONNECTIONS
	1226: target.KindBusy,       // ER_USER_LIMIT_REACHED (max_queries_per_hour and the like)
	1062: target.KindConstraint, // ER_DUP_ENTRY
	1586: target.KindConstraint, // ER_DUP_ENTRY_WITH_KEY_NAME
	1451: target.KindConstraint, // ER_ROW_IS_REFERENCED_2: a foreign key forbids the delete or update
	1452: target.KindConstraint, // ER_NO_REFERENCED_ROW_2: the foreign key's parent row is missing
	1216: target.KindConstraint, // ER_NO_REFERENCED_ROW
	1217: target.KindConstraint, // ER_ROW_IS_REFERENCED
	1048: target.KindConstraint, // ER_BAD_NULL_ERROR: NOT NULL
	3819: target.KindConstraint, // MySQL ER_CHECK_CONSTRAINT_VIOLATED
	4025: target.KindConstraint, // MariaDB ER_CONSTRAINT_FAILED (CHECK)
	3024: target.KindTimeout,    // MySQL ER_QUERY_TIMEOUT (max_execution_time)
	1969: target.KindTimeout,    // MariaDB ER_STATEMENT_TIMEOUT (max_statement_time)
	1053: target.KindConnection, // ER_SERVER_SHUTDOWN
	1927: target.KindConnection, // MariaDB ER_CONNECTION_KILLED
	1152: target.KindConnection, // ER_ABORTING_CONNECTION
	1158: target.KindConnection, // ER_NET_READ_ERROR
	1159: target.KindConnection, // ER_NET_READ_INTERRUPTED
	1160: target.KindConnection, // ER_NET_ERROR_ON_WRITE
	1161: target.KindConnection, // ER_NET_WRITE_INTERRUPTED
}

// kindOf wraps err with its error kind. Context errors pass unchanged (the
// engine counts them as timeouts), as do not-found and unknown errors.
func kindOf(err error) error {
	if err == nil || errors.Is(err, target.ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ke *target.KindError
	if errors.As(err, &ke) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if k, ok := kinds[me.Number]; ok {
			return &target.KindError{K: k, Err: err}
		}
		return err
	}
	// The driver answers a dead connection with ErrInvalidConn (after a
	// failed read or write, including a read_timeout) or ErrBadConn; a
	// refused dial is a net error.
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) || target.IsConnectionError(err) {
		return &target.KindError{K: target.KindConnection, Err: err}
	}
	return err
}
