// Reads a manifest list and its manifests with Apache Iceberg's Java library (the reference
// implementation, from the local stack's REST catalog jars) and prints them as JSON.
// manifest-interop.test.ts compiles and runs it. It lives in Iceberg's package because
// ManifestLists and ManifestReader#entries are package-private there.
package org.apache.iceberg;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;

public class ReadWithIcebergJava {
  public static void main(String[] args) throws Exception {
    FileIO io = new HadoopFileIO(new Configuration());
    List<String> manifests = new ArrayList<>();
    for (ManifestFile manifest : ManifestLists.read(io.newInputFile(args[0]))) {
      List<String> entries = new ArrayList<>();
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io);
          CloseableIterable<ManifestEntry<DataFile>> all = reader.entries()) {
        for (ManifestEntry<DataFile> entry : all) {
          DataFile file = entry.file();
          List<String> partition = new ArrayList<>();
          for (int i = 0; i < file.partition().size(); i += 1) {
            partition.add(value(file.partition().get(i, Object.class)));
          }
          entries.add(
              object(
                  "status", str(entry.status().name()),
                  "snapshot_id", value(entry.snapshotId()),
                  "sequence_number", value(entry.dataSequenceNumber()),
                  "file_sequence_number", value(entry.fileSequenceNumber()),
                  "file_path", str(file.location()),
                  "file_format", str(file.format().name()),
                  "spec_id", value(file.specId()),
                  "partition", "[" + String.join(",", partition) + "]",
                  "record_count", value(file.recordCount()),
                  "column_sizes", map(file.columnSizes()),
                  "lower_bounds", map(file.lowerBounds()),
                  "split_offsets", value(file.splitOffsets())));
        }
      }
      manifests.add(
          object(
              "manifest_path", str(manifest.path()),
              "sequence_number", value(manifest.sequenceNumber()),
              "min_sequence_number", value(manifest.minSequenceNumber()),
              "added_snapshot_id", value(manifest.snapshotId()),
              "added_files_count", value(manifest.addedFilesCount()),
              "existing_files_count", value(manifest.existingFilesCount()),
              "deleted_files_count", value(manifest.deletedFilesCount()),
              "partition_lower_bounds", bounds(manifest, true),
              "entries", "[" + String.join(",", entries) + "]"));
    }
    System.out.println("[" + String.join(",", manifests) + "]");
  }

  private static String bounds(ManifestFile manifest, boolean lower) {
    List<String> out = new ArrayList<>();
    for (ManifestFile.PartitionFieldSummary summary : manifest.partitions()) {
      out.add(value(lower ? summary.lowerBound() : summary.upperBound()));
    }
    return "[" + String.join(",", out) + "]";
  }

  private static String object(String... pairs) {
    StringBuilder out = new StringBuilder("{");
    for (int i = 0; i < pairs.length; i += 2) {
      if (i > 0) out.append(',');
      out.append(str(pairs[i])).append(':').append(pairs[i + 1]);
    }
    return out.append('}').toString();
  }

  private static String map(Map<Integer, ?> map) {
    if (map == null) return "null";
    List<String> out = new ArrayList<>();
    for (Map.Entry<Integer, ?> e : map.entrySet()) out.add(str(e.getKey().toString()) + ":" + value(e.getValue()));
    return "{" + String.join(",", out) + "}";
  }

  /** Numbers as strings (64-bit exact), bytes as hex, everything else by its string form. */
  private static String value(Object value) {
    if (value == null) return "null";
    if (value instanceof ByteBuffer) {
      ByteBuffer buffer = ((ByteBuffer) value).duplicate();
      StringBuilder hex = new StringBuilder();
      while (buffer.hasRemaining()) hex.append(String.format("%02x", buffer.get()));
      return "{\"hex\":\"" + hex + "\"}";
    }
    if (value instanceof byte[]) return value(ByteBuffer.wrap((byte[]) value));
    if (value instanceof List) {
      List<String> out = new ArrayList<>();
      for (Object item : (List<?>) value) out.add(value(item));
      return "[" + String.join(",", out) + "]";
    }
    return str(value.toString());
  }

  private static String str(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }
}
