// Writes a v2 manifest and manifest list with Apache Iceberg's Java library, for
// manifest-java.test.ts to read with Floe's reader: manifests other engines wrote (Spark
// compaction, a Java writer) must read back when Floe merges them. In Iceberg's package because
// ManifestLists is package-private.
package org.apache.iceberg;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.Types;

public class WriteWithIcebergJava {
  public static void main(String[] args) throws Exception {
    String dir = args[0];
    long snapshotId = 3051729675574597004L;
    Schema schema =
        new Schema(
            required(1, "id", Types.LongType.get()),
            optional(2, "ts", Types.TimestampType.withZone()),
            optional(3, "category", Types.StringType.get()),
            optional(5, "amount", Types.DecimalType.of(10, 2)),
            optional(6, "device", Types.UUIDType.get()));
    PartitionSpec spec =
        PartitionSpec.builderFor(schema)
            .withSpecId(0)
            .day("ts")
            .identity("category")
            .bucket("id", 16)
            .identity("amount")
            .identity("device")
            .build();
    FileIO io = new HadoopFileIO(new Configuration());
    ManifestWriter<DataFile> writer =
        ManifestFiles.write(2, spec, io.newOutputFile(dir + "/java-manifest.avro"), snapshotId);
    writer.add(file(spec, 1, 19723, "ünïcode ✓", 7, "-123.45", "123e4567-e89b-12d3-a456-426614174000"));
    writer.existing(file(spec, 2, null, null, null, null, null), 3051729675574597002L, 5L, 6L);
    writer.delete(file(spec, 3, 19000, "c", 1, "0.01", null), 2L, 3L);
    writer.close();
    ManifestListWriter list =
        ManifestLists.write(2, io.newOutputFile(dir + "/java-list.avro"), snapshotId, 3051729675574597003L, 7L, null);
    list.add(writer.toManifestFile());
    list.close();
  }

  private static DataFile file(
      PartitionSpec spec, int n, Integer day, String category, Integer bucket, String amount, String device) {
    PartitionData partition = new PartitionData(spec.partitionType());
    partition.set(0, day);
    partition.set(1, category);
    partition.set(2, bucket);
    partition.set(3, amount == null ? null : new BigDecimal(amount));
    partition.set(4, device == null ? null : UUID.fromString(device));
    Metrics metrics =
        new Metrics(
            100L + n,
            Map.of(1, 123L, 2, 9007199254740993L),
            Map.of(1, 10L),
            Map.of(2, 0L),
            Map.of(),
            Map.of(1, ByteBuffer.wrap(new byte[] {1, 0, 0, 0, 0, 0, 0, 0})),
            Map.of(3, ByteBuffer.wrap(new byte[] {'z', 'z'})));
    return DataFiles.builder(spec)
        .withPath("file:///warehouse/db/t/data/" + n + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(4096L + n)
        .withPartition(partition)
        .withMetrics(metrics)
        .withSplitOffsets(List.of(4L))
        .withSortOrder(SortOrder.unsorted())
        .build();
  }
}
