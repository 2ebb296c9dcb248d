package dev.hbase.cache.operator.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.metrics.CacheProbe;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * The benchmark's side of {@link BridgedOperator}: serves the simulated clusters' admin calls
 * ({@code /hbase/<method>?quorum=...}) and /jmx samples ({@code /probe/<method>}) over HTTP on the
 * loopback, as the in-process benchmark hands them to the reconciler directly.
 */
final class HBaseBridge implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules();
  private final HttpServer http;
  private final ExecutorService threads = Executors.newFixedThreadPool(16);

  HBaseBridge(Function<String, HBaseCluster> byQuorum, CacheProbe probe) throws IOException {
    http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    http.setExecutor(threads);
    http.createContext(
        "/hbase/",
        ex ->
            answer(
                ex,
                HBaseCluster.class,
                byQuorum.apply(query(ex).get("quorum")),
                ex.getRequestURI().getPath().substring("/hbase/".length())));
    http.createContext(
        "/probe/",
        ex ->
            answer(
                ex,
                CacheProbe.class,
                probe,
                ex.getRequestURI().getPath().substring("/probe/".length())));
    http.start();
  }

  String url() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  private static void answer(HttpExchange ex, Class<?> api, Object target, String name)
      throws IOException {
    ObjectNode out = JSON.createObjectNode();
    try {
      JsonNode args = JSON.readTree(ex.getRequestBody());
      if (target == null) {
        throw new IllegalStateException("no simulated cluster for " + ex.getRequestURI());
      }
      Method m =
          Arrays.stream(api.getMethods())
              .filter(x -> x.getName().equals(name) && x.getParameterCount() == args.size())
              .findFirst()
              .orElseThrow(() -> new IllegalArgumentException("no method " + name));
      Type[] types = m.getGenericParameterTypes();
      Object[] values = new Object[types.length];
      for (int i = 0; i < types.length; i++) {
        values[i] = JSON.convertValue(args.get(i), JSON.getTypeFactory().constructType(types[i]));
      }
      Object result;
      try {
        result = m.invoke(target, values);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      out.set("value", JSON.valueToTree(result));
    } catch (HBaseClusterException.NotReady e) {
      out.put("error", "NotReady").put("message", e.getMessage());
    } catch (HBaseClusterException e) {
      out.put("error", "HBaseClusterException").put("message", e.getMessage());
    } catch (IOException e) {
      out.put("error", "IOException").put("message", e.getMessage());
    } catch (Throwable e) {
      out.put("error", e.getClass().getSimpleName()).put("message", String.valueOf(e));
    }
    byte[] body = JSON.writeValueAsBytes(out);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(200, body.length);
    try (var o = ex.getResponseBody()) {
      o.write(body);
    }
  }

  private static Map<String, String> query(HttpExchange ex) {
    String q = ex.getRequestURI().getRawQuery();
    if (q == null) {
      return Map.of();
    }
    var m = new java.util.HashMap<String, String>();
    for (String kv : q.split("&")) {
      int i = kv.indexOf('=');
      if (i > 0) {
        m.put(kv.substring(0, i), URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8));
      }
    }
    return m;
  }

  @Override
  public void close() {
    http.stop(0);
    threads.shutdownNow();
  }
}
