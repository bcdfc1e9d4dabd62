package flusstool;

/**
 * The --all-types fixture: every Fluss type, alone and nested.
 */
final class AllTypes {
    private AllTypes() {}


    /** Every Fluss type, alone and nested; the column set of --all-types. */
    static final String ALL_TYPES =
            String.join(
                    ", ",
                    "id BIGINT NOT NULL",
                    "c_boolean BOOLEAN",
                    "c_tinyint TINYINT",
                    "c_smallint SMALLINT",
                    "c_int INT",
                    "c_bigint BIGINT",
                    "c_float FLOAT",
                    "c_double DOUBLE",
                    "c_decimal_5_2 DECIMAL(5, 2)",
                    "c_decimal_18_6 DECIMAL(18, 6)",
                    "c_decimal_38_0 DECIMAL(38, 0)",
                    "c_decimal_38_18 DECIMAL(38, 18)",
                    "c_char CHAR(8)",
                    "c_string STRING",
                    "c_binary BINARY(4)",
                    "c_bytes BYTES",
                    "c_date DATE",
                    "c_time_0 TIME(0)",
                    "c_time_3 TIME(3)",
                    "c_time_6 TIME(6)",
                    "c_time_9 TIME(9)",
                    "c_ts_0 TIMESTAMP(0)",
                    "c_ts_1 TIMESTAMP(1)",
                    "c_ts_2 TIMESTAMP(2)",
                    "c_ts_3 TIMESTAMP(3)",
                    "c_ts_4 TIMESTAMP(4)",
                    "c_ts_5 TIMESTAMP(5)",
                    "c_ts_6 TIMESTAMP(6)",
                    "c_ts_7 TIMESTAMP(7)",
                    "c_ts_8 TIMESTAMP(8)",
                    "c_ts_9 TIMESTAMP(9)",
                    "c_ltz_0 TIMESTAMP_LTZ(0)",
                    "c_ltz_1 TIMESTAMP_LTZ(1)",
                    "c_ltz_2 TIMESTAMP_LTZ(2)",
                    "c_ltz_3 TIMESTAMP_LTZ(3)",
                    "c_ltz_4 TIMESTAMP_LTZ(4)",
                    "c_ltz_5 TIMESTAMP_LTZ(5)",
                    "c_ltz_6 TIMESTAMP_LTZ(6)",
                    "c_ltz_7 TIMESTAMP_LTZ(7)",
                    "c_ltz_8 TIMESTAMP_LTZ(8)",
                    "c_ltz_9 TIMESTAMP_LTZ(9)",
                    "c_int_not_null INT NOT NULL",
                    "c_string_not_null STRING NOT NULL",
                    "c_array_int ARRAY<INT>",
                    "c_array_string_not_null ARRAY<STRING NOT NULL>",
                    "c_array_double ARRAY<DOUBLE>",
                    "c_array_decimal ARRAY<DECIMAL(38, 10)>",
                    "c_array_ts ARRAY<TIMESTAMP(9)>",
                    "c_array_array ARRAY<ARRAY<BIGINT>>",
                    "c_map_string_int MAP<STRING, INT>",
                    "c_map_int_string MAP<INT, STRING>",
                    "c_map_bytes_ltz MAP<BYTES, TIMESTAMP_LTZ(3)>",
                    "c_map_string_array MAP<STRING, ARRAY<FLOAT>>",
                    "c_row ROW<a INT, b STRING, c DOUBLE>",
                    "c_row_nested ROW<inner ROW<d DECIMAL(20, 4), t TIMESTAMP(6)>,"
                            + " tags ARRAY<STRING>, attrs MAP<STRING, BOOLEAN>>",
                    "c_array_row ARRAY<ROW<k STRING, v DATE>>",
                    "c_map_string_row MAP<STRING, ROW<x BINARY(2), y TIME(3)>>");
}
