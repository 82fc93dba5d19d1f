/**
 * The coordination service: the verticles that host the layers on the event bus
 * ({@link io.github.fdbcoord.service.CoordinationVerticle}), the HTTP API, WebSocket and dashboard,
 * and the stand-alone main.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.service;

import org.apiguardian.api.API;
