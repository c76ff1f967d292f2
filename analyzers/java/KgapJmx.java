import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * capture's JMX reader (analyzers/src/capture/jmx.rs runs it with the target JDK's java, in
 * source-file mode: no build, no jar, JDK classes only). Read-only: it connects to a JVM's
 * local JMX connector, whose address it reads on stdin (capture takes it from `jcmd PID
 * ManagementAgent.status`; on stdin, not argv, so no process list shows it), and prints every
 * readable attribute of the MBeans matching the patterns given as arguments
 * (`kafka.producer:*`), one per line:
 *
 *   mbean<TAB>attribute<TAB>value
 *
 * in name order, then one last line `#skipped<TAB>mbeans<TAB>attributes`: the MBeans that
 * went away between the query and their reading (a client closed) and the attributes whose
 * getter threw, so that the report can say what it did not read. Nothing is ever set or
 * invoked.
 * Exit 0 read (possibly no MBean matched), 1 could not connect (the reason on stderr).
 */
public final class KgapJmx {
    public static void main(String[] args) throws Exception {
        String url = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
        if (url == null || url.isBlank()) {
            System.err.println("no connector address on stdin");
            System.exit(1);
        }
        JMXConnector c;
        try {
            c = JMXConnectorFactory.connect(new JMXServiceURL(url.trim()));
        } catch (Exception e) {
            System.err.println("cannot connect: " + e);
            System.exit(1);
            return;
        }
        try (c) {
            MBeanServerConnection s = c.getMBeanServerConnection();
            Set<String> names = new TreeSet<>();
            for (String pattern : args) {
                for (ObjectName n : s.queryNames(new ObjectName(pattern), null)) {
                    names.add(n.toString());
                }
            }
            StringBuilder out = new StringBuilder();
            int skippedBeans = 0;
            int skippedAttributes = 0;
            for (String name : names) {
                ObjectName n = new ObjectName(name);
                MBeanAttributeInfo[] infos;
                try {
                    infos = s.getMBeanInfo(n).getAttributes();
                } catch (Exception e) {
                    skippedBeans++; // unregistered since the query (a client closed)
                    continue;
                }
                List<String> attrs = new ArrayList<>();
                for (MBeanAttributeInfo a : infos) {
                    if (a.isReadable()) {
                        attrs.add(a.getName());
                    }
                }
                attrs.sort(null);
                for (String a : attrs) {
                    Object v;
                    try {
                        v = s.getAttribute(n, a);
                    } catch (Exception e) {
                        skippedAttributes++;
                        continue;
                    }
                    out.append(name).append('\t').append(a).append('\t').append(shown(v)).append('\n');
                }
            }
            out.append("#skipped\t").append(skippedBeans).append('\t').append(skippedAttributes).append('\n');
            System.out.print(out);
        }
    }

    /** A value on one line: composite data as key=value pairs, the rest by toString. */
    private static String shown(Object v) {
        if (v instanceof CompositeData cd) {
            StringBuilder b = new StringBuilder();
            for (String k : new TreeSet<>(cd.getCompositeType().keySet())) {
                if (b.length() > 0) {
                    b.append(", ");
                }
                b.append(k).append('=').append(cd.get(k));
            }
            return b.toString();
        }
        return String.valueOf(v).replace('\n', ' ').replace('\t', ' ');
    }
}
