# vertx-fdb-coordination: builds the fat jar and runs it, with FoundationDB's native client
# library (libfdb_c.so) taken from the official image of the same version as the fdb-java
# dependency, so the container runs embedded (default) or against a real cluster.
#
#   docker build -t vertx-fdb-coordination .
#   docker run -p 8080:8080 -e FDBCOORD_HTTP_TOKEN=secret vertx-fdb-coordination
#   docker run -p 8080:8080 -e FDBCOORD_HTTP_TOKEN=secret \
#     -v /etc/foundationdb/fdb.cluster:/etc/foundationdb/fdb.cluster:ro \
#     -e FDBCOORD_CLUSTER_FILE=/etc/foundationdb/fdb.cluster vertx-fdb-coordination

ARG FDB_VERSION=7.3.68

FROM foundationdb/foundationdb:${FDB_VERSION} AS fdb

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
COPY .mvn .mvn
COPY api api
COPY store store
COPY embedded embedded
COPY layers layers
COPY testing testing
COPY client client
COPY cluster cluster
COPY service service
COPY conf conf
RUN mvn -q -B package -DskipTests && cp service/target/vertx-fdb-coordination-service-*-fat.jar /src/app.jar

FROM eclipse-temurin:17-jre
COPY --from=fdb /usr/lib/libfdb_c.so /usr/lib/libfdb_c.so
# curl for the HEALTHCHECK below: the JRE image does not promise one.
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
RUN ldconfig && useradd --system --home /app fdbcoord && mkdir -p /app/data && chown fdbcoord /app/data
WORKDIR /app
COPY --from=build /src/app.jar /app/app.jar
COPY conf /app/conf
USER fdbcoord
# Inside a container the service must listen beyond loopback to be reachable, which requires a
# token: set FDBCOORD_HTTP_TOKEN at run time (the service refuses to start without one).
ENV FDBCOORD_HTTP_HOST=0.0.0.0 \
    FDBCOORD_DATA_DIR=/app/data
VOLUME /app/data
EXPOSE 8080
STOPSIGNAL SIGTERM
# /health commits one blind write (503 when the store does not commit) and, like every route, needs the
# token: it goes to curl on standard input, not on the command line where ps would show it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
  CMD printf 'Authorization: Bearer %s\n' "$FDBCOORD_HTTP_TOKEN" \
    | curl -fsS -o /dev/null -H @- "http://127.0.0.1:${FDBCOORD_HTTP_PORT:-8080}/health" || exit 1
# An OutOfMemoryError ends the process (the container's restart policy brings it back): a JVM out
# of memory would otherwise keep answering every write with an error while looking alive.
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/app/app.jar", "conf/config.json"]
