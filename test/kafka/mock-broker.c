/*
 * A Kafka-protocol broker for tidemark's tests: librdkafka's mock cluster (rdkafka_mock.h, the
 * cluster librdkafka tests itself against) as a standalone process. See test/kafka/broker.mjs and
 * ../shared/docs/kafka-test-broker.md for what the mock supports.
 *
 *   mock-broker [brokers] [topic:partitions ...]
 *
 * Prints the bootstrap list (127.0.0.1:p1,127.0.0.1:p2,...) as its first stdout line, then reads
 * one command per stdin line and answers each with one line, "ok" or "error <text>":
 *
 *   topic <name> <partitions>             create a topic (replication factor 1)
 *   errors <apiKey> <code>[,<code>...]    the next requests of that API key fail with these codes, in order
 *   clear <apiKey>                        drop the pushed errors of that API key
 *   down <brokerId> | up <brokerId>       take a broker off the network / back (its connections are closed)
 *   leader <topic> <partition> <brokerId> move a partition's leadership
 *   rtt <brokerId> <ms>                   delay every response of a broker
 *   topic-error <topic> <code>            Metadata answers this error for the topic (3 = unknown topic: the
 *                                         mock otherwise auto-creates a topic a client asks about)
 *
 * Exits on stdin EOF (so a test that dies takes its broker with it), SIGTERM or SIGINT.
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reply(rd_kafka_resp_err_t err) {
  if (err) printf("error %s\n", rd_kafka_err2str(err));
  else printf("ok\n");
  fflush(stdout);
}

static int create_topic(rd_kafka_mock_cluster_t *mc, const char *spec) {
  char name[512];
  int partitions = 4;
  const char *colon = strrchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (len == 0 || len >= sizeof(name)) return -1;
  memcpy(name, spec, len);
  name[len] = 0;
  if (colon) partitions = atoi(colon + 1);
  if (partitions < 1) return -1;
  return rd_kafka_mock_topic_create(mc, name, partitions, 1) ? -1 : 0;
}

int main(int argc, char **argv) {
  char errstr[512];
  int brokers = argc > 1 ? atoi(argv[1]) : 3;
  if (brokers < 1) brokers = 1;
  signal(SIGPIPE, SIG_IGN);

  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  /* The handle only hosts the cluster; it logs nothing unless asked. */
  rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!rk) {
    fprintf(stderr, "mock-broker: rd_kafka_new: %s\n", errstr);
    return 1;
  }
  rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
  if (!mc) {
    fprintf(stderr, "mock-broker: could not create the mock cluster\n");
    return 1;
  }
  for (int i = 2; i < argc; i++) {
    if (create_topic(mc, argv[i])) {
      fprintf(stderr, "mock-broker: bad topic '%s' (expected name:partitions)\n", argv[i]);
      return 2;
    }
  }
  printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  fflush(stdout);

  char line[1024];
  while (fgets(line, sizeof(line), stdin)) {
    char cmd[32] = "", a[512] = "", b[512] = "", c[64] = "";
    int n = sscanf(line, "%31s %511s %511s %63s", cmd, a, b, c);
    if (n <= 0) continue;
    if (!strcmp(cmd, "topic") && n == 3) {
      reply(rd_kafka_mock_topic_create(mc, a, atoi(b), 1));
    } else if (!strcmp(cmd, "errors") && n == 3) {
      rd_kafka_resp_err_t codes[64];
      size_t cnt = 0;
      for (char *tok = strtok(b, ","); tok && cnt < 64; tok = strtok(NULL, ",")) codes[cnt++] = (rd_kafka_resp_err_t)atoi(tok);
      rd_kafka_mock_push_request_errors_array(mc, (int16_t)atoi(a), cnt, codes);
      reply(0);
    } else if (!strcmp(cmd, "clear") && n == 2) {
      rd_kafka_mock_clear_request_errors(mc, (int16_t)atoi(a));
      reply(0);
    } else if (!strcmp(cmd, "down") && n == 2) {
      reply(rd_kafka_mock_broker_set_down(mc, atoi(a)));
    } else if (!strcmp(cmd, "up") && n == 2) {
      reply(rd_kafka_mock_broker_set_up(mc, atoi(a)));
    } else if (!strcmp(cmd, "leader") && n == 4) {
      reply(rd_kafka_mock_partition_set_leader(mc, a, atoi(b), atoi(c)));
    } else if (!strcmp(cmd, "topic-error") && n == 3) {
      rd_kafka_mock_topic_set_error(mc, a, (rd_kafka_resp_err_t)atoi(b));
      reply(0);
    } else if (!strcmp(cmd, "rtt") && n == 3) {
      reply(rd_kafka_mock_broker_set_rtt(mc, atoi(a), atoi(b)));
    } else {
      printf("error unknown command: %s", line);
      if (!strchr(line, '\n')) printf("\n");
      fflush(stdout);
    }
  }
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}
