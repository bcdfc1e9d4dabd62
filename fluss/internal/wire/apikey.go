package wire

import "strconv"

// APIKey identifies a Fluss RPC (int16 in the request header).
type APIKey int16

// The API keys this client uses. A server drops requests whose key it does
// not serve (coordinator-only keys sent to a tablet server and vice versa)
// without answering, so every call needs a timeout.
const (
	APIVersions                APIKey = 1000 // C,T
	CreateDatabase             APIKey = 1001 // C
	DropDatabase               APIKey = 1002 // C
	ListDatabases              APIKey = 1003 // C,T
	DatabaseExists             APIKey = 1004 // C,T
	CreateTable                APIKey = 1005 // C
	DropTable                  APIKey = 1006 // C
	GetTableInfo               APIKey = 1007 // C,T
	ListTables                 APIKey = 1008 // C,T
	ListPartitionInfos         APIKey = 1009 // C,T
	TableExists                APIKey = 1010 // C,T
	GetTableSchema             APIKey = 1011 // C,T
	GetMetadata                APIKey = 1012 // C,T
	ProduceLog                 APIKey = 1014 // T, bucket leader
	FetchLog                   APIKey = 1015 // T, bucket leader
	PutKV                      APIKey = 1016 // T, bucket leader
	Lookup                     APIKey = 1017 // T, bucket leader
	ListOffsets                APIKey = 1021 // T, bucket leader
	GetLatestKVSnapshots       APIKey = 1023 // C,T
	GetKVSnapshotMetadata      APIKey = 1024 // C,T
	GetFileSystemSecurityToken APIKey = 1025 // C,T
	InitWriter                 APIKey = 1026 // T
	LimitScan                  APIKey = 1033 // T, bucket leader
	GetDatabaseInfo            APIKey = 1035 // C,T
	CreatePartition            APIKey = 1036 // C
	DropPartition              APIKey = 1037 // C
	Authenticate               APIKey = 1038 // C,T
	AlterTable                 APIKey = 1044 // C
)

var apiNames = map[APIKey]string{
	APIVersions:                "API_VERSIONS",
	CreateDatabase:             "CREATE_DATABASE",
	DropDatabase:               "DROP_DATABASE",
	ListDatabases:              "LIST_DATABASES",
	DatabaseExists:             "DATABASE_EXISTS",
	CreateTable:                "CREATE_TABLE",
	DropTable:                  "DROP_TABLE",
	GetTableInfo:               "GET_TABLE_INFO",
	ListTables:                 "LIST_TABLES",
	ListPartitionInfos:         "LIST_PARTITION_INFOS",
	TableExists:                "TABLE_EXISTS",
	GetTableSchema:             "GET_TABLE_SCHEMA",
	GetMetadata:                "GET_METADATA",
	ProduceLog:                 "PRODUCE_LOG",
	FetchLog:                   "FETCH_LOG",
	PutKV:                      "PUT_KV",
	Lookup:                     "LOOKUP",
	ListOffsets:                "LIST_OFFSETS",
	GetLatestKVSnapshots:       "GET_LATEST_KV_SNAPSHOTS",
	GetKVSnapshotMetadata:      "GET_KV_SNAPSHOT_METADATA",
	GetFileSystemSecurityToken: "GET_FILESYSTEM_SECURITY_TOKEN",
	InitWriter:                 "INIT_WRITER",
	LimitScan:                  "LIMIT_SCAN",
	GetDatabaseInfo:            "GET_DATABASE_INFO",
	CreatePartition:            "CREATE_PARTITION",
	DropPartition:              "DROP_PARTITION",
	Authenticate:               "AUTHENTICATE",
	AlterTable:                 "ALTER_TABLE",
}

// String returns the Fluss name of the key, or API_<n> for keys this package
// does not name.
func (k APIKey) String() string {
	if n, ok := apiNames[k]; ok {
		return n
	}
	return "API_" + strconv.Itoa(int(k))
}

// clientMaxVersion is the highest version of each API this client speaks.
// Everything is version 0 except PUT_KV and LOOKUP, whose version 1 only
// changes how the client encodes keys of lake tables with a custom bucket
// key; this client encodes keys the v0 way, so it stays at 0 for them too.
func clientMaxVersion(APIKey) int16 { return 0 }

// ServerType is what a server reports about its role in ApiVersions (0.9+).
type ServerType int32

// Server roles.
const (
	ServerTypeUnknown      ServerType = 0
	ServerTypeCoordinator  ServerType = 1
	ServerTypeTabletServer ServerType = 2
)

// String implements fmt.Stringer.
func (t ServerType) String() string {
	switch t {
	case ServerTypeCoordinator:
		return "coordinator"
	case ServerTypeTabletServer:
		return "tablet-server"
	}
	return "unknown"
}
