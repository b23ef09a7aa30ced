//! MySQL's error numbers, SQLSTATEs and message formats, in one place. Every error a client
//! sees is built here: `SqlError::new(ER_DUP_ENTRY, &[&key, &index])`.
//!
//! INVARIANT: each entry's number, SQLSTATE and message text are MySQL 8.0's
//! (share/messages_to_clients.txt); `%s`/`%d`/`%u`/`%lu` are filled in order.

use std::fmt;

/// One MySQL error: number, SQLSTATE, message format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCode {
    pub code: u16,
    pub state: &'static str,
    pub format: &'static str,
}

macro_rules! codes {
    ($($name:ident = $code:expr, $state:expr, $fmt:expr;)*) => {
        $(pub const $name: ErrorCode = ErrorCode { code: $code, state: $state, format: $fmt };)*
        /// Every code, for lookups by number.
        pub const ALL: &[ErrorCode] = &[$($name),*];
    };
}

codes! {
    ER_FILE_NOT_FOUND = 29, "HY000", "File '%s' not found (OS errno %d - %s)";
    ER_CON_COUNT_ERROR = 1040, "08004", "Too many connections";
    ER_NET_ERROR_ON_WRITE = 1160, "08S01", "Got an error writing communication packets";
    ER_HANDSHAKE_ERROR = 1043, "08S01", "Bad handshake";
    ER_DBACCESS_DENIED_ERROR = 1044, "42000", "Access denied for user '%s'@'%s' to database '%s'";
    ER_ACCESS_DENIED_ERROR = 1045, "28000", "Access denied for user '%s'@'%s' (using password: %s)";
    ER_NO_DB_ERROR = 1046, "3D000", "No database selected";
    ER_UNKNOWN_COM_ERROR = 1047, "08S01", "Unknown command";
    ER_BAD_NULL_ERROR = 1048, "23000", "Column '%s' cannot be null";
    ER_BAD_DB_ERROR = 1049, "42000", "Unknown database '%s'";
    ER_TABLE_EXISTS_ERROR = 1050, "42S01", "Table '%s' already exists";
    ER_BAD_TABLE_ERROR = 1051, "42S02", "Unknown table '%s'";
    ER_NON_UNIQ_ERROR = 1052, "23000", "Column '%s' in %s is ambiguous";
    ER_SERVER_SHUTDOWN = 1053, "08S01", "Server shutdown in progress";
    ER_BAD_FIELD_ERROR = 1054, "42S22", "Unknown column '%s' in '%s'";
    ER_WRONG_FIELD_WITH_GROUP = 1055, "42000", "Expression #%u of %s is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by";
    ER_WRONG_GROUP_FIELD = 1056, "42000", "Can't group on '%s'";
    ER_WRONG_VALUE_COUNT = 1058, "21S01", "Column count doesn't match value count";
    ER_TOO_LONG_IDENT = 1059, "42000", "Identifier name '%s' is too long";
    ER_DUP_FIELDNAME = 1060, "42S21", "Duplicate column name '%s'";
    ER_DUP_KEYNAME = 1061, "42000", "Duplicate key name '%s'";
    ER_DUP_ENTRY = 1062, "23000", "Duplicate entry '%s' for key '%s'";
    ER_WRONG_FIELD_SPEC = 1063, "42000", "Incorrect column specifier for column '%s'";
    ER_PARSE_ERROR = 1064, "42000", "%s near '%s' at line %d";
    ER_EMPTY_QUERY = 1065, "42000", "Query was empty";
    ER_NONUNIQ_TABLE = 1066, "42000", "Not unique table/alias: '%s'";
    ER_VIEW_WRONG_LIST = 1353, "HY000", "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts";
    ER_INVALID_DEFAULT = 1067, "42000", "Invalid default value for '%s'";
    ER_MULTIPLE_PRI_KEY = 1068, "42000", "Multiple primary key defined";
    ER_TOO_MANY_KEYS = 1069, "42000", "Too many keys specified; max %d keys allowed";
    ER_TOO_LONG_KEY = 1071, "42000", "Specified key was too long; max key length is %d bytes";
    ER_KEY_COLUMN_DOES_NOT_EXITS = 1072, "42000", "Key column '%s' doesn't exist in table";
    ER_TOO_BIG_FIELDLENGTH = 1074, "42000", "Column length too big for column '%s' (max = %lu); use BLOB or TEXT instead";
    ER_WRONG_AUTO_KEY = 1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key";
    ER_NO_SUCH_THREAD = 1094, "HY000", "Unknown thread id: %lu";
    ER_KILL_DENIED_ERROR = 1095, "HY000", "You are not owner of thread %lu";
    ER_NO_TABLES_USED = 1096, "HY000", "No tables used";
    ER_BLOB_CANT_HAVE_DEFAULT = 1101, "42000", "BLOB, TEXT, GEOMETRY or JSON column '%s' can't have a default value";
    ER_WRONG_DB_NAME = 1102, "42000", "Incorrect database name '%s'";
    ER_WRONG_TABLE_NAME = 1103, "42000", "Incorrect table name '%s'";
    ER_UNKNOWN_PROCEDURE = 1106, "42000", "Unknown procedure '%s'";
    ER_UNKNOWN_TABLE = 1109, "42S02", "Unknown table '%s' in %s";
    ER_FIELD_SPECIFIED_TWICE = 1110, "42000", "Column '%s' specified twice";
    ER_INVALID_GROUP_FUNC_USE = 1111, "HY000", "Invalid use of group function";
    ER_TABLE_MUST_HAVE_COLUMNS = 1113, "42000", "A table must have at least 1 column";
    ER_RECORD_FILE_FULL = 1114, "HY000", "The table '%s' is full";
    ER_UNKNOWN_CHARACTER_SET = 1115, "42000", "Unknown character set: '%s'";
    ER_TOO_BIG_ROWSIZE = 1118, "42000", "Row size too large. The maximum row size for the used table type, not counting BLOBs, is %ld. This includes storage overhead, check the manual. You have to change some columns to TEXT or BLOBs";
    ER_WRONG_OUTER_JOIN = 1120, "42000", "Cross dependency found in OUTER JOIN; examine your ON conditions";
    ER_NULL_COLUMN_IN_INDEX = 1121, "42000", "Table handler doesn't support NULL in given index. Please change column '%s' to be NOT NULL or use another handler";
    ER_PASSWORD_NO_MATCH = 1133, "42000", "Can't find any matching row in the user table";
    ER_NONEXISTING_GRANT = 1141, "42000", "There is no such grant defined for user '%s' on host '%s'";
    ER_TABLEACCESS_DENIED_ERROR = 1142, "42000", "%s command denied to user '%s'@'%s' for table '%s'";
    ER_COLUMNACCESS_DENIED_ERROR = 1143, "42000", "%s command denied to user '%s'@'%s' for column '%s' in table '%s'";
    ER_WRONG_FIELD_TERMINATORS = 1083, "42000", "Field separator argument is not what is expected; check the manual";
    ER_ILLEGAL_GRANT_FOR_TABLE = 1144, "42000", "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used";
    ER_NONEXISTING_TABLE_GRANT = 1147, "42000", "There is no such grant defined for user '%s' on host '%s' on table '%s'";
    ER_CANT_CREATE_USER_WITH_GRANT = 1410, "42000", "You are not allowed to create a user with GRANT";
    ER_DYNAMIC_PRIV_NOT_REGISTERED = 3929, "HY000", "Dynamic privilege '%s' is not registered with the server.";
    ER_WRONG_COLUMN_NAME = 1166, "42000", "Incorrect column name '%s'";
    ER_WRONG_KEY_COLUMN = 1167, "42000", "The used storage engine can't index column '%s'";
    ER_BLOB_KEY_WITHOUT_LENGTH = 1170, "42000", "BLOB/TEXT column '%s' used in key specification without a key length";
    ER_PRIMARY_CANT_HAVE_NULL = 1171, "42000", "All parts of a PRIMARY KEY must be NOT NULL; if you need NULL in a key, use UNIQUE instead";
    ER_FILE_EXISTS_ERROR = 1086, "HY000", "File '%s' already exists";
    ER_TOO_MANY_ROWS = 1172, "42000", "Result consisted of more than one row";
    ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE = 1175, "HY000", "You are using safe update mode and you tried to update a table without a WHERE that uses a KEY column. ";
    ER_KEY_DOES_NOT_EXITS = 1176, "42000", "Key '%s' doesn't exist in table '%s'";
    ER_CHECK_NOT_IMPLEMENTED = 1178, "42000", "The storage engine for the table doesn't support %s";
    ER_CANT_DO_THIS_DURING_AN_TRANSACTION = 1179, "25000", "You are not allowed to execute this command in a transaction";
    ER_ERROR_DURING_COMMIT = 1180, "HY000", "Got error %d - '%s' during COMMIT";
    ER_ERROR_DURING_ROLLBACK = 1181, "HY000", "Got error %d - '%s' during ROLLBACK";
    ER_NEW_ABORTING_CONNECTION = 1184, "08S01", "Aborted connection %u to db: '%s' user: '%s' host: '%s' (%s)";
    ER_LOCK_OR_ACTIVE_TRANSACTION = 1192, "HY000", "Can't execute the given command because you have active locked tables or an active transaction";
    ER_UNKNOWN_SYSTEM_VARIABLE = 1193, "HY000", "Unknown system variable '%s'";
    ER_LOCK_WAIT_TIMEOUT = 1205, "HY000", "Lock wait timeout exceeded; try restarting transaction";
    ER_LOCK_DEADLOCK = 1213, "40001", "Deadlock found when trying to get lock; try restarting transaction";
    ER_DUP_UNIQUE = 1169, "23000", "Can't write, because of unique constraint, to table '%s'";
    ER_WRONG_ARGUMENTS = 1210, "HY000", "Incorrect arguments to %s";
    ER_NO_PERMISSION_TO_CREATE_USER = 1211, "42000", "'%s'@'%s' is not allowed to create new users";
    ER_QUERY_INTERRUPTED = 1317, "70100", "Query execution was interrupted";
    ER_LOCAL_VARIABLE = 1228, "HY000", "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL";
    ER_GLOBAL_VARIABLE = 1229, "HY000", "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL";
    ER_NO_DEFAULT = 1230, "42000", "Variable '%s' doesn't have a default value";
    ER_WRONG_VALUE_FOR_VAR = 1231, "42000", "Variable '%s' can't be set to the value of '%s'";
    ER_WRONG_TYPE_FOR_VAR = 1232, "42000", "Incorrect argument type to variable '%s'";
    ER_VAR_CANT_BE_READ = 1233, "HY000", "Variable '%s' can only be set, not read";
    ER_NOT_SUPPORTED_YET = 1235, "42000", "This version of MySQL doesn't yet support '%s'";
    ER_COLUMN_CHECK_CONSTRAINT_REFERENCES_OTHER_COLUMN = 3813, "HY000", "Column check constraint '%s' references other column.";
    ER_CHECK_CONSTRAINT_NAMED_FUNCTION_IS_NOT_ALLOWED = 3814, "HY000", "An expression of a check constraint '%s' contains disallowed function: %s.";
    ER_CHECK_CONSTRAINT_FUNCTION_IS_NOT_ALLOWED = 3815, "HY000", "An expression of a check constraint '%s' contains disallowed function.";
    ER_CHECK_CONSTRAINT_VARIABLES = 3816, "HY000", "An expression of a check constraint '%s' cannot refer to a user or system variable.";
    ER_CHECK_CONSTRAINT_REFERS_AUTO_INCREMENT_COLUMN = 3818, "HY000", "Check constraint '%s' cannot refer to an auto-increment column.";
    ER_CHECK_CONSTRAINT_VIOLATED = 3819, "HY000", "Check constraint '%s' is violated.";
    ER_CHECK_CONSTRAINT_REFERS_UNKNOWN_COLUMN = 3820, "HY000", "Check constraint '%s' refers to non-existing column '%s'.";
    ER_CHECK_CONSTRAINT_NOT_FOUND = 3821, "HY000", "Check constraint '%s' is not found in the table.";
    ER_CHECK_CONSTRAINT_DUP_NAME = 3822, "HY000", "Duplicate check constraint name '%s'.";
    ER_CONSTRAINT_NOT_FOUND = 3940, "HY000", "Constraint '%s' does not exist.";
    ER_DEPENDENT_BY_CHECK_CONSTRAINT = 3959, "HY000", "Check constraint '%s' uses column '%s', hence column cannot be dropped or renamed.";
    ER_ROW_IS_REFERENCED_2 = 1451, "23000", "Cannot delete or update a parent row: a foreign key constraint fails (%s)";
    ER_NO_REFERENCED_ROW_2 = 1452, "23000", "Cannot add or update a child row: a foreign key constraint fails (%s)";
    ER_CANNOT_ADD_FOREIGN = 1215, "HY000", "Cannot add foreign key constraint";
    ER_DROP_INDEX_FK = 1553, "HY000", "Cannot drop index '%s': needed in a foreign key constraint";
    ER_TRUNCATE_ILLEGAL_FK = 1701, "42000", "Cannot truncate a table referenced in a foreign key constraint (%s)";
    ER_FK_NO_INDEX_PARENT = 1822, "HY000", "Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'";
    ER_FK_CANNOT_OPEN_PARENT = 1824, "HY000", "Failed to open the referenced table '%s'";
    ER_FK_DUP_NAME = 1826, "HY000", "Duplicate foreign key constraint name '%s'";
    ER_FK_COLUMN_CANNOT_DROP = 1828, "HY000", "Cannot drop column '%s': needed in a foreign key constraint '%s'";
    ER_FK_COLUMN_CANNOT_DROP_CHILD = 1829, "HY000", "Cannot drop column '%s': needed in a foreign key constraint '%s' of table '%s'";
    ER_FK_COLUMN_NOT_NULL = 1830, "HY000", "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL";
    ER_FK_DEPTH_EXCEEDED = 3008, "HY000", "Foreign key cascade delete/update exceeds max depth of %d.";
    ER_FK_CANNOT_DROP_PARENT = 3730, "HY000", "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.";
    ER_FK_NO_COLUMN_PARENT = 3734, "HY000", "Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in the referenced table '%s'";
    ER_FK_INCOMPATIBLE_COLUMNS = 3780, "HY000", "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.";
    ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED = 3102, "HY000", "Expression of generated column '%s' contains a disallowed function.";
    ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN = 3105, "HY000", "The value specified for generated column '%s' in table '%s' is not allowed.";
    ER_MANDATORY_ROLE = 3628, "HY000", "The role %s is a mandatory role and can't be revoked or dropped. The restriction can be lifted by excluding the role name from the mandatory_roles system variable value.";
    ER_ROLE_GRANTED_TO_ITSELF = 4027, "HY000", "User account %s is directly or indirectly granted to the role %s. The GRANT would create a loop";
    ER_DEFAULT_AS_VAL_GENERATED = 3773, "HY000", "DEFAULT function cannot be used with default value expressions";
    ER_DEPENDENT_BY_DEFAULT_GENERATED_VALUE = 3766, "HY000", "Column '%s' of table '%s' has a default value expression dependency and cannot be dropped or renamed.";
    ER_DEFAULT_VAL_GENERATED_NON_PRIOR = 3767, "HY000", "Default value expression of column '%s' cannot refer to a column defined after it if that column is a generated column or has an expression as default value.";
    ER_DEFAULT_VAL_GENERATED_REF_AUTO_INC = 3768, "HY000", "Default value expression of column '%s' cannot refer to an auto-increment column.";
    ER_DEFAULT_VAL_GENERATED_FUNCTION_IS_NOT_ALLOWED = 3769, "HY000", "Default value expression of column '%s' contains a disallowed function.";
    ER_DEFAULT_VAL_GENERATED_VARIABLES = 3772, "HY000", "Default value expression of column '%s' cannot refer user or system variables.";
    ER_GENERATED_COLUMN_NON_PRIOR = 3107, "HY000", "Generated column can refer only to generated columns defined prior to it.";
    ER_DEPENDENT_BY_GENERATED_COLUMN = 3108, "HY000", "Column '%s' has a generated column dependency.";
    ER_GENERATED_COLUMN_REF_AUTO_INC = 3109, "HY000", "Generated column '%s' cannot refer to auto-increment column.";
    ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN = 1906, "HY000", "The value specified for generated column '%s' in table '%s' has been ignored";
    ER_WRONG_OBJECT = 1347, "HY000", "'%s.%s' is not %s";
    ER_NONUPDATEABLE_COLUMN = 1348, "HY000", "Column '%s' is not updatable";
    ER_VIEW_SELECT_CLAUSE = 1350, "HY000", "View's SELECT contains a '%s' clause";
    ER_VIEW_SELECT_VARIABLE = 1351, "HY000", "View's SELECT contains a variable or parameter";
    ER_VIEW_INVALID = 1356, "HY000", "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them";
    ER_NO_DEFAULT_FOR_VIEW_FIELD = 1423, "HY000", "Field of view '%s.%s' underlying table doesn't have a default value";
    ER_VIEW_CHECK_FAILED = 1369, "HY000", "CHECK OPTION failed '%s.%s'";
    ER_VIEW_RECURSIVE = 1462, "HY000", "`%s`.`%s` contains view recursion";
    ER_VIEW_NO_INSERT_FIELD_LIST = 1394, "HY000", "Can not insert into join view '%s.%s' without fields list";
    ER_VIEW_DELETE_MERGE_VIEW = 1395, "HY000", "Can not delete from join view '%s.%s'";
    ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238, "HY000", "Variable '%s' is a %s variable";
    ER_WRONG_FK_DEF = 1239, "42000", "Incorrect foreign key definition for '%s': %s";
    ER_OPERAND_COLUMNS = 1241, "21000", "Operand should contain %d column(s)";
    ER_SUBQUERY_NO_1_ROW = 1242, "21000", "Subquery returns more than 1 row";
    ER_UNKNOWN_STMT_HANDLER = 1243, "HY000", "Unknown prepared statement handler (%.*s) given to %s";
    ER_ILLEGAL_REFERENCE = 1247, "42S22", "Reference '%s' not supported (%s)";
    ER_DERIVED_MUST_HAVE_ALIAS = 1248, "42000", "Every derived table must have its own alias";
    ER_UNKNOWN_STORAGE_ENGINE = 1286, "42000", "Unknown storage engine '%s'";
    ER_WARN_DEPRECATED_SYNTAX = 1287, "HY000", "'%s' is deprecated and will be removed in a future release. Please use %s instead";
    ER_UNSUPPORTED_PS = 1295, "HY000", "This command is not supported in the prepared statement protocol yet";
    ER_TRUNCATED_WRONG_VALUE = 1292, "22007", "Truncated incorrect %s value: '%s'";
    ER_UNKNOWN_TIME_ZONE = 1298, "HY000", "Unknown or incorrect time zone: '%s'";
    ER_WARN_USING_OTHER_HANDLER = 1266, "HY000", "Using storage engine %s for table '%s'";
    ER_UNKNOWN_COLLATION = 1273, "HY000", "Unknown collation: '%s'";
    ER_COLLATION_CHARSET_MISMATCH = 1253, "42000", "COLLATION '%s' is not valid for CHARACTER SET '%s'";
    ER_WARN_DATA_OUT_OF_RANGE = 1264, "22003", "Out of range value for column '%s' at row %ld";
    WARN_DATA_TRUNCATED = 1265, "01000", "Data truncated for column '%s' at row %ld";
    ER_WARN_NULL_TO_NOTNULL = 1263, "22004", "Column set to default value; NULL supplied to NOT NULL column '%s' at row %ld";
    ER_CANT_AGGREGATE_2COLLATIONS = 1267, "HY000", "Illegal mix of collations (%s,%s) and (%s,%s) for operation '%s'";
    ER_CANNOT_USER = 1396, "HY000", "Operation %s failed for %.256s";
    ER_OPEN_AS_READONLY = 1036, "HY000", "Table '%-.192s' is read only";
    ER_UNRESOLVED_TABLE_LOCK = 3568, "HY000", "Unresolved table name %s in locking clause.";
    ER_DUPLICATE_TABLE_LOCK = 3569, "HY000", "Table %s appears in multiple locking clauses.";
    ER_ACCOUNT_HAS_BEEN_LOCKED = 3118, "HY000", "Access denied for user '%-.48s'@'%-.64s'. Account is locked.";
    ER_UNKNOWN_AUTHID = 3523, "HY000", "Unknown authorization ID `%.64s`@`%.64s`";
    ER_ROLE_NOT_GRANTED = 3530, "HY000", "%s is not granted to %s";
    ER_ALTER_OPERATION_NOT_SUPPORTED = 1845, "0A000", "%s is not supported for this operation. Try %s.";
    ER_ALTER_OPERATION_NOT_SUPPORTED_REASON = 1846, "0A000", "%s is not supported. Reason: %s. Try %s.";
    ER_PLUGIN_IS_NOT_LOADED = 1524, "HY000", "Plugin '%s' is not loaded";
    ER_PASSWORD_FORMAT = 1827, "HY000", "The password hash doesn't have the expected format.";
    ER_TRUNCATED_WRONG_VALUE_FOR_FIELD = 1366, "HY000", "Incorrect %-.32s value: '%-.128s' for column '%.192s' at row %ld";
    ER_DATA_TOO_LONG = 1406, "22001", "Data too long for column '%s' at row %ld";
    ER_XAER_NOTA = 1397, "XAE04", "XAER_NOTA: Unknown XID";
    ER_XAER_INVAL = 1398, "XAE05", "XAER_INVAL: Invalid arguments (or unsupported command)";
    ER_XAER_RMFAIL = 1399, "XAE07", "XAER_RMFAIL: The command cannot be executed when global transaction is in the  %.64s state";
    ER_XAER_OUTSIDE = 1400, "XAE09", "XAER_OUTSIDE: Some work is done outside global transaction";
    ER_DIVISION_BY_ZERO = 1365, "22012", "Division by 0";
    ER_SP_DOES_NOT_EXIST = 1305, "42000", "%s %s does not exist";
    ER_NET_PACKET_TOO_LARGE = 1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes";
    ER_NET_READ_ERROR = 1158, "08S01", "Got an error reading communication packets";
    ER_NET_READ_INTERRUPTED = 1159, "08S01", "Got timeout reading communication packets";
    ER_TOO_BIG_PRECISION = 1426, "42000", "Too-big precision %u specified for '%s'. Maximum is %u.";
    ER_M_BIGGER_THAN_D = 1427, "42000", "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%s').";
    ER_TOO_BIG_SCALE = 1425, "42000", "Too big scale %u specified for column '%s'. Maximum is %u.";
    ER_TOO_BIG_DISPLAYWIDTH = 1439, "42000", "Display width out of range for column '%s' (max = %lu)";
    ER_DATETIME_FUNCTION_OVERFLOW = 1441, "22008", "Datetime function: %s field overflow";
    ER_DATA_OUT_OF_RANGE = 1690, "22003", "%s value is out of range in '%s'";
    ER_WRONG_VALUE = 1525, "HY000", "Incorrect %s value: '%s'";
    ER_TOO_LONG_TABLE_COMMENT = 1628, "HY000", "Comment for table '%s' is too long (max = %lu)";
    ER_UNSUPPORTED_EXTENSION = 1112, "42000", "Table '%s' uses an extension that doesn't exist in this MySQL version";
    ER_INVALID_CHARACTER_STRING = 1300, "HY000", "Invalid %s character string: '%.64s'";
    ER_SPECIFIC_ACCESS_DENIED_ERROR = 1227, "42000", "Access denied; you need (at least one of) the %s privilege(s) for this operation";
    ER_DB_CREATE_EXISTS = 1007, "HY000", "Can't create database '%s'; database exists";
    ER_DB_DROP_EXISTS = 1008, "HY000", "Can't drop database '%s'; database doesn't exist";
    ER_NO_SUCH_TABLE = 1146, "42S02", "Table '%s.%s' doesn't exist";
    ER_NOT_ALLOWED_COMMAND = 1148, "42000", "The used command is not allowed with this MySQL version";
    ER_SYNTAX_ERROR = 1149, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use";
    ER_CANT_DROP_FIELD_OR_KEY = 1091, "42000", "Can't DROP '%s'; check that column/key exists";
    ER_CANT_REMOVE_ALL_FIELDS = 1090, "42000", "You can't delete all columns with ALTER TABLE; use DROP TABLE instead";
    ER_TOO_MANY_FIELDS = 1117, "HY000", "Too many columns";
    ER_MIX_OF_GROUP_FUNC_AND_FIELDS = 1140, "42000", "In aggregated query without GROUP BY, expression #%u of SELECT list contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by";
    ER_CTE_RECURSIVE_REQUIRES_UNION = 3573, "HY000", "Recursive Common Table Expression '%s' should contain a UNION";
    ER_CTE_MAX_RECURSION_DEPTH = 3636, "HY000", "Recursive query aborted after %u iterations. Try increasing @@cte_max_recursion_depth to a larger value.";
    ER_WINDOW_NO_CHILD_PARTITIONING = 3581, "HY000", "A window which depends on another cannot define partitioning.";
    ER_WINDOW_NO_INHERIT_FRAME = 3582, "HY000", "Window '%s' has a frame definition, so cannot be referenced by another window.";
    ER_WINDOW_NO_REDEFINE_ORDER_BY = 3583, "HY000", "Window '%s' cannot inherit '%s' since both contain an ORDER BY clause.";
    ER_WINDOW_RANGE_FRAME_ORDER_TYPE = 3587, "HY000", "Window '%s' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type";
    ER_WINDOW_NO_SUCH_WINDOW = 3579, "HY000", "Window name '%s' is not defined.";
    ER_WINDOW_INVALID_WINDOW_FUNC_USE = 3593, "HY000", "You cannot use the window function '%s' in this context.'";
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582, "42000", "Incorrect parameter count in the call to native function '%s'";
    ER_FUNC_INEXISTENT_NAME_COLLISION = 1630, "42000", "FUNCTION %s does not exist. Check the 'Function Name Parsing and Resolution' section in the Reference Manual";
    ER_WRONG_ARGUMENTS_COUNT = 1318, "42000", "Incorrect number of arguments for %s %s; expected %u, got %u";
    ER_WRONG_VALUE_COUNT_ON_ROW = 1136, "21S01", "Column count doesn't match value count at row %ld";
    ER_NON_INSERTABLE_TABLE = 1471, "HY000", "The target table %s of the %s is not insertable-into";
    ER_UPDATE_TABLE_USED = 1093, "HY000", "You can't specify target table '%s' for update in FROM clause";
    ER_ROW_IS_REFERENCED = 1217, "23000", "Cannot delete or update a parent row: a foreign key constraint fails";
    ER_AUTOINC_READ_FAILED = 1467, "HY000", "Failed to read auto-increment value from storage engine";
    ER_WARN_TOO_FEW_RECORDS = 1261, "01000", "Row %ld doesn't contain data for all columns";
    ER_WARN_TOO_MANY_RECORDS = 1262, "01000", "Row %ld was truncated; it contained more data than there were input columns";
    ER_READ_ONLY_TRANSACTION = 1207, "25000", "Update locks cannot be acquired during a READ UNCOMMITTED transaction";
    ER_CLIENT_LOCAL_FILES_DISABLED = 3948, "42000", "Loading local data is disabled; this must be enabled on both the client and server sides";
    ER_UNKNOWN_EXPLAIN_FORMAT = 1791, "HY000", "Unknown EXPLAIN format name: '%s'";
    ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792, "25006", "Cannot execute statement in a READ ONLY transaction.";
    ER_CANT_CHANGE_TX_CHARACTERISTICS = 1568, "25001", "Transaction characteristics can't be changed while a transaction is in progress";
    ER_LOCK_NOWAIT = 3572, "HY000", "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.";
    ER_WRONG_NAME_FOR_INDEX = 1280, "42000", "Incorrect index name '%s'";
    ER_TABLE_DEF_CHANGED = 1412, "HY000", "Table definition has changed, please retry transaction";
    ER_CANT_CREATE_FILE = 1004, "HY000", "Can't create file '%s' (errno: %d - %s)";
    ER_ERROR_ON_READ = 1024, "HY000", "Error reading file '%s' (errno: %d - %s)";
    ER_ERROR_ON_WRITE = 1026, "HY000", "Error writing file '%s' (errno: %d - %s)";
    ER_CHECKREAD = 1020, "HY000", "Record has changed since last read in table '%s'";
    ER_GET_ERRNO = 1030, "HY000", "Got error %d - '%s' from storage engine";
    ER_ILLEGAL_HA = 1031, "HY000", "Table storage engine for '%s' doesn't have this option";
    ER_ILLEGAL_HA_CREATE_OPTION = 1478, "HY000", "Table storage engine '%s' does not support the create option '%s'";
    ER_CRASHED_ON_USAGE = 1194, "HY000", "Table '%s' is marked as crashed and should be repaired";
    ER_NOT_KEYFILE = 1034, "HY000", "Incorrect key file for table '%s'; try to repair it";
    ER_OUT_OF_RESOURCES = 1041, "HY000", "Out of memory; check if mysqld or some other process uses all available memory; if not, you may have to use 'ulimit' to allow mysqld to use more memory or you can add more swap space";
    ER_INTERNAL_ERROR = 1815, "HY000", "Internal error: %s";
    ER_OPTION_PREVENTS_STATEMENT = 1290, "HY000", "The MySQL server is running with the %s option so it cannot execute this statement";
    ER_CANT_UPDATE_WITH_READLOCK = 1223, "HY000", "Can't execute the query because you have a conflicting read lock";
    ER_TABLE_NOT_LOCKED_FOR_WRITE = 1099, "HY000", "Table '%s' was locked with a READ lock and can't be updated";
    ER_TABLE_NOT_LOCKED = 1100, "HY000", "Table '%s' was not locked with LOCK TABLES";
    ER_MAX_PREPARED_STMT_COUNT_REACHED = 1461, "42000", "Can't create more than max_prepared_stmt_count statements (current value: %lu)";
    ER_NO_SUCH_INDEX = 1082, "42S12", "Table '%s' has no index like the one used in CREATE INDEX; recreate the table";
    ER_INDEX_COLUMN_TOO_LONG = 1709, "HY000", "Index column size too large. The maximum column size is %lu bytes.";
    ER_INVALID_USE_OF_NULL = 1138, "22004", "Invalid use of NULL value";
    ER_SUBQUERY_NO_1_COLUMN = 1240, "21000", "Operand should contain 1 column(s)";
    ER_KEY_NOT_FOUND = 1032, "HY000", "Can't find record in '%s'";
    ER_WRONG_USAGE = 1221, "HY000", "Incorrect usage of %s and %s";
    ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT = 1222, "21000", "The used SELECT statements have a different number of columns";
    ER_NOT_SUPPORTED_AUTH_MODE = 1251, "08004", "Client does not support authentication protocol requested by server; consider upgrading MySQL client";
    ER_UNKNOWN_ERROR = 1105, "HY000", "Unknown error";
    ER_VARIABLE_IS_READONLY = 1621, "HY000", "%s variable '%s' is read-only. Use SET %s to assign the value";
    ER_CLIENT_INTERACTION_TIMEOUT = 4031, "HY000", "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.";
    ER_CUT_VALUE_GROUP_CONCAT = 1260, "HY000", "Row %u was cut by GROUP_CONCAT()";
    ER_INVALID_ARGUMENT_FOR_LOGARITHM = 3020, "2201E", "Invalid argument for logarithm";
    ER_WARN_ALLOWED_PACKET_OVERFLOWED = 1301, "HY000", "Result of %s() was larger than max_allowed_packet (%ld) - truncated";
    ER_REGEXP_ERROR = 1139, "42000", "Got error '%s' from regexp";
    ER_REGEXP_INDEX_OUT_OF_BOUNDS = 3686, "HY000", "Index out of bounds in regular expression search.";
    ER_USER_LOCK_WRONG_NAME = 3057, "42000", "Incorrect user-level lock name '%s'.";
    ER_INCORRECT_TYPE = 3064, "HY000", "Incorrect type for argument %s in function %s.";
    ER_INVALID_JSON_TEXT = 3140, "22032", "Invalid JSON text: \"%s\" at position %u in value for column '%s'.";
    ER_INVALID_JSON_TEXT_IN_PARAM = 3141, "22032", "Invalid JSON text in argument %u to function %s: \"%s\" at position %u.";
    ER_INVALID_JSON_PATH = 3143, "42000", "Invalid JSON path expression. The error is around character position %u.";
    ER_INVALID_TYPE_FOR_JSON = 3146, "22032", "Invalid data type for JSON data in argument %u to function %s; a JSON string or JSON type is required.";
    ER_INVALID_JSON_PATH_WILDCARD = 3149, "42000", "In this situation, path expressions may not contain the * and ** tokens or an array range.";
    ER_JSON_USED_AS_KEY = 3152, "42000", "JSON column '%s' supports indexing only via generated columns on a specified JSON path.";
    ER_JSON_VACUOUS_PATH = 3153, "42000", "The path expression '$' is not allowed in this context.";
    ER_JSON_BAD_ONE_OR_ALL_ARG = 3154, "42000", "The oneOrAll argument to %s may take these values: 'one' or 'all'.";
    ER_JSON_DOCUMENT_TOO_DEEP = 3157, "22032", "The JSON document exceeds the maximum depth.";
    ER_JSON_DOCUMENT_NULL_KEY = 3158, "22032", "JSON documents may not contain NULL member names.";
    ER_INVALID_JSON_PATH_ARRAY_CELL = 3165, "42000", "A path expression is not a path to a cell in an array.";
    ER_WRONG_VALUE_FOR_TYPE = 1411, "HY000", "Incorrect %s value: '%s' for function %s";
    ER_QUERY_TIMEOUT = 3024, "HY000", "Query execution was interrupted, maximum statement execution time exceeded";
    ER_NO_DEFAULT_FOR_FIELD = 1364, "HY000", "Field '%s' doesn't have a default value";
    ER_SP_FETCH_NO_DATA = 1329, "02000", "No data - zero rows fetched, selected, or processed";
    ER_MISSING_JSON_TABLE_VALUE = 3665, "22035", "Missing value for JSON_TABLE column '%s'";
    ER_WRONG_JSON_TABLE_VALUE = 3666, "2203F", "Can't store an array or an object in the scalar JSON_TABLE column '%s'";
    ER_TF_MUST_HAVE_ALIAS = 3667, "42000", "Every table function must have an alias";
    ER_TF_FORBIDDEN_JOIN_TYPE = 3668, "42000", "INNER or LEFT JOIN must be used for LATERAL references made by '%s'";
    ER_JT_VALUE_OUT_OF_RANGE = 3669, "22003", "Value is out of range for JSON_TABLE's column '%s'";
    ER_JT_MAX_NESTED_PATH = 3670, "42000", "More than supported %u NESTED PATHs were found in JSON_TABLE '%s'";
    ER_MISSING_JSON_VALUE = 3966, "22035", "No value was found by '%s' on the specified path.";
    ER_MULTIPLE_JSON_VALUES = 3967, "22034", "More than one value was found by '%s' on the specified path.";
    ER_NON_UPDATABLE_TABLE = 1288, "HY000", "The target table %s of the %s is not updatable";
    ER_FIELD_IN_GROUPING_NOT_GROUP_BY = 3602, "HY000", "Argument #%u of GROUPING function is not in GROUP BY";
    ER_WARN_FIELD_RESOLVED = 1276, "HY000", "Field or reference '%s%s%s%s%s' of SELECT #%d was resolved in SELECT #%d";
}

/// An error as sent to a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
}

impl SqlError {
    /// Fills `ec`'s format with `args` in order.
    pub fn new(ec: ErrorCode, args: &[&dyn fmt::Display]) -> SqlError {
        SqlError {
            code: ec.code,
            state: ec.state,
            message: format_message(ec.format, args),
        }
    }

    /// A syntax error: `near` is the rest of the statement from where parsing failed.
    pub fn parse(near: &str, line: usize) -> SqlError {
        let near: String = near.chars().take(80).collect();
        SqlError::new(
            ER_PARSE_ERROR,
            &[
                &"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use",
                &near,
                &line,
            ],
        )
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

impl std::error::Error for SqlError {}

/// Replaces each printf-style conversion (`%s`, `%d`, `%lu`, `%-.64s`, `%.*s`...) with the
/// next argument; `%%` is a percent sign.
pub fn format_message(format: &str, args: &[&dyn fmt::Display]) -> String {
    let mut out = String::with_capacity(format.len() + 16);
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // Skip flags, width, precision and length modifiers up to the conversion letter.
        while let Some(&n) = chars.peek() {
            chars.next();
            if matches!(n, 's' | 'd' | 'u' | 'f' | 'g' | 'x' | 'c') {
                break;
            }
        }
        if let Some(a) = args.next() {
            out.push_str(&a.to_string());
        }
    }
    out
}

/// The entry for a number (the first one if several names share it).
pub fn by_code(code: u16) -> Option<ErrorCode> {
    ALL.iter().copied().find(|e| e.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_mysql() {
        let e = SqlError::new(ER_DUP_ENTRY, &[&"1", &"PRIMARY"]);
        assert_eq!(e.code, 1062);
        assert_eq!(e.state, "23000");
        assert_eq!(e.message, "Duplicate entry '1' for key 'PRIMARY'");
        let e = SqlError::new(ER_DATA_TOO_LONG, &[&"c", &3]);
        assert_eq!(e.message, "Data too long for column 'c' at row 3");
        let e = SqlError::new(ER_UNKNOWN_STMT_HANDLER, &[&"10", &"mysqld_stmt_execute"]);
        assert_eq!(
            e.message,
            "Unknown prepared statement handler (10) given to mysqld_stmt_execute"
        );
    }

    #[test]
    fn codes_are_unique_per_name() {
        for e in ALL {
            assert_eq!(e.state.len(), 5, "{}", e.code);
            assert_eq!(by_code(e.code).map(|x| x.code), Some(e.code));
        }
    }
}
