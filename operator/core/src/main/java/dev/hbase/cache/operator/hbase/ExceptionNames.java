package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ExceptionResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ResponseHeader;
import org.apache.hbase.thirdparty.com.google.protobuf.CodedInputStream;
import org.apache.hbase.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBufOutputStream;
import org.apache.hbase.thirdparty.io.netty.buffer.Unpooled;

/**
 * The exception class names an HBase server may name to the operator's client: those of the classes
 * the client could load, read once from the JDK's {@code java.base} and from the jars of HBase's
 * and Hadoop's client (a class name that ends in {@code Exception} or {@code Error}).
 *
 * <p>Why: the server names the class of every exception it answers with, and HBase's client looks
 * the name up as a class, on its shared event loop ({@code IPCUtil.isFatalConnectionException},
 * then {@code RemoteWithExtrasException.unwrapRemoteException}, and on the SASL path Hadoop's
 * {@code RemoteException.unwrapRemoteException}, which initialises the class). The JDK keeps a
 * class-loading lock for every name tried, for the loader's life: a second review measured 27 MiB
 * kept for 500 names of 60,000 characters from a fake server. A name on this list is a class that
 * exists, so the names a server can have looked up are a fixed set. Any other name is answered as a
 * name HBase's client cannot load is today ({@code DoNotRetryIOException}, "Unable to load
 * exception received from server"), with the name, shortened, in the message.
 */
final class ExceptionNames {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ExceptionNames.class);

  private ExceptionNames() {}

  /** What an unknown name becomes on the RPC path: what the client makes of a class it lacks. */
  static final String STAND_IN = "org.apache.hadoop.hbase.DoNotRetryIOException";

  /** The longest name looked up: HBase's and Hadoop's longest are under 120 characters. */
  static final int MAX_LENGTH = 256;

  private static final Pattern NAME =
      Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*");

  private static final class Known {
    static final Set<String> NAMES = read();
  }

  /** Whether the client may look {@code name} up as a class. */
  static boolean known(String name) {
    return name != null
        && name.length() <= MAX_LENGTH
        && NAME.matcher(name).matches()
        && Known.NAMES.contains(name);
  }

  /** How many names are known (for the tests: the list was read). */
  static int count() {
    return Known.NAMES.size();
  }

  /** A name as a message shows it: at most 120 characters, nothing but name characters. */
  static String shown(String name) {
    if (name == null) {
      return "(none)";
    }
    String s = name.replaceAll("[^A-Za-z0-9_$.]", "?");
    return s.length() <= 120 ? s : s.substring(0, 120) + "... (" + name.length() + " characters)";
  }

  /**
   * The answer frame with an exception class name the client does not know replaced by {@link
   * #STAND_IN} (and the server's name, shortened, at the head of the message, which HBase's client
   * takes from the stack trace); null when the frame names no exception, or a known one. The frame:
   * HBase's, as its frame decoder passes it on (4-byte length, then the delimited header and what
   * follows it), with a header {@link AnswerWeight#of} has read.
   */
  static ByteBuf rewritten(ByteBuf frame) {
    int from = frame.readerIndex();
    CodedInputStream in =
        CodedInputStream.newInstance(frame.nioBuffer(from + 4, frame.writerIndex() - from - 4));
    ResponseHeader header;
    int headerEnd;
    try {
      header = ResponseHeader.parseFrom(in.readRawBytes(in.readRawVarint32()));
      headerEnd = from + 4 + in.getTotalBytesRead();
    } catch (IOException e) {
      return null; // the weigher refuses it
    }
    if (!header.hasException() || known(header.getException().getExceptionClassName())) {
      return null;
    }
    ExceptionResponse e = header.getException();
    ResponseHeader replaced =
        header.toBuilder()
            .setException(
                e.toBuilder()
                    .setExceptionClassName(STAND_IN)
                    .setDoNotRetry(true)
                    .setStackTrace(
                        "the server answered with exception class "
                            + shown(e.getExceptionClassName())
                            + ", which the operator's HBase client does not load: "
                            + shortened(e.getStackTrace())))
            .build();
    // the header alone: HBase reads nothing after an exception's header
    int size =
        CodedOutputStream.computeUInt32SizeNoTag(replaced.getSerializedSize())
            + replaced.getSerializedSize();
    // on the heap, not from the channel's capped allocator: the header may have grown past the cap
    // by the shortened name (a header is at most AnswerWeight.MAX_HEADER)
    ByteBuf out = Unpooled.buffer(4 + size);
    try {
      out.writeInt(size);
      replaced.writeDelimitedTo(new ByteBufOutputStream(out));
      return out;
    } catch (IOException | RuntimeException x) {
      out.release();
      throw new IllegalStateException("an exception answer could not be rewritten", x);
    }
  }

  /** A server's message as the rewritten answer carries it: at most 64 KiB of characters. */
  private static String shortened(String m) {
    return m.length() <= 64 << 10 ? m : m.substring(0, 64 << 10) + "... (" + m.length() + " chars)";
  }

  private static Set<String> read() {
    Set<String> out = new HashSet<>();
    // the JDK's java.* modules (java.base, java.security.sasl's SaslException, ...)
    for (var m : ModuleFinder.ofSystem().findAll()) {
      if (!m.descriptor().name().startsWith("java.")) {
        continue;
      }
      try (ModuleReader r = m.open();
          Stream<String> entries = r.list()) {
        entries.forEach(e -> add(e, out));
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "the JDK's {} cannot be listed: its exceptions are not known",
            m.descriptor().name(),
            e);
      }
    }
    Set<Path> jars = new HashSet<>();
    for (Class<?> c :
        List.of(
            org.apache.hadoop.hbase.DoNotRetryIOException.class, // hbase-client
            org.apache.hadoop.hbase.HBaseIOException.class, // hbase-common in an unshaded build
            org.apache.hadoop.ipc.RemoteException.class)) { // hadoop-common
      try {
        jars.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()));
      } catch (URISyntaxException | RuntimeException e) {
        LOG.warn("the jar of {} cannot be found: its exceptions are not known", c.getName(), e);
      }
    }
    for (Path jar : jars) {
      if (Files.isDirectory(jar)) {
        continue; // classes of this build, none of them a server's exception
      }
      try (ZipFile z = new ZipFile(jar.toFile())) {
        z.stream().forEach(e -> add(e.getName(), out));
      } catch (IOException | RuntimeException e) {
        LOG.warn("{} cannot be read: its exceptions are not known", jar, e);
      }
    }
    // only what HBase's client could make of the name: an IOException subclass that loads (loaded,
    // not initialised); the shaded third-party packages' exceptions are nothing a server sends
    Set<String> kept = new HashSet<>();
    ClassLoader loader = ExceptionNames.class.getClassLoader();
    for (String name : out) {
      if (name.startsWith("org.apache.hadoop.hbase.shaded.")
          || name.startsWith("org.apache.hbase.thirdparty.")) {
        continue;
      }
      try {
        if (IOException.class.isAssignableFrom(Class.forName(name, false, loader))) {
          kept.add(name);
        }
      } catch (Throwable e) { // NoClassDefFoundError for a class whose dependencies are absent
        LOG.trace("{} is not loadable: {}", name, e.toString());
      }
    }
    LOG.debug("{} exception class names known", kept.size());
    return Set.copyOf(kept);
  }

  private static void add(String entry, Set<String> out) {
    if (!entry.endsWith(".class") || entry.startsWith("META-INF/")) {
      return;
    }
    String name = entry.substring(0, entry.length() - 6).replace('/', '.');
    String simple = name.substring(name.lastIndexOf('.') + 1);
    int inner = simple.lastIndexOf('$');
    String last = inner < 0 ? simple : simple.substring(inner + 1);
    if (last.endsWith("Exception") || last.endsWith("Error")) {
      out.add(name);
    }
  }
}
