/*
 * Probe: reads values the way `scripts/fluss-java.sh append --file` does
 * (JsonParser, then FromJson into a GenericRow) and prints them as the tool's
 * Renderer writes them, for TestDecodeAgainstJava. It is compiled with the
 * tool's sources (package flusstool), no cluster needed:
 *
 *   cp="$(scripts/fluss-cluster.sh classpath | tail -n 1)"
 *   javac -nowarn -d /tmp/probe -cp "$cp" scripts/FlussTool.java scripts/flusstool/*.java \
 *       fluss/jsonrow/testdata/javaprobe/Probe.java
 *   java -cp "/tmp/probe:$cp" flusstool.Probe \
 *       < fluss/jsonrow/testdata/java-inputs.tsv > fluss/jsonrow/testdata/java-cases.tsv
 *
 * Input lines: TYPE <tab> JSON value (a line starting with # is copied).
 * Output lines: TYPE <tab> JSON <tab> ok <tab> {"v":canonical JSON}, or
 * TYPE <tab> JSON <tab> err <tab> the Java error.
 */
package flusstool;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.RowType;

public final class Probe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        StringBuilder sb = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            int tab = line.indexOf('\t');
            if (line.startsWith("#") || tab < 0) {
                out.println(line);
                continue;
            }
            String type = line.substring(0, tab);
            String value = line.substring(tab + 1);
            String result;
            try {
                DataType t = TypeParser.parseType(type);
                RowType rt = new RowType(List.of(new DataField("v", t)));
                Object v = new JsonParser("{\"v\":" + value + "}").parseDocument();
                GenericRow row = FromJson.row(v, rt, "row");
                sb.setLength(0);
                new Renderer(rt).row(sb, row);
                result = "ok\t" + sb;
            } catch (RuntimeException e) {
                result = "err\t" + String.valueOf(e.getMessage()).replace('\t', ' ').replace('\n', ' ');
            }
            out.println(type + "\t" + value + "\t" + result);
        }
        out.flush();
    }
}
