/**
 * The coordination service: {@link io.github.fdbcoord.service.CoordinationVerticle} reads its
 * {@link io.github.fdbcoord.service.CoordinationConfig}, opens the store and deploys the verticles that host
 * the layers on the event bus ({@code io.github.fdbcoord.service.eventbus}) and the HTTP API, WebSocket and
 * dashboard ({@code io.github.fdbcoord.service.http}); {@link io.github.fdbcoord.service.CoordinationMain} is
 * the stand-alone main. The subpackages are internal; the dependencies run one way, from this package to
 * {@code http} to {@code eventbus}.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.service;

import org.apiguardian.api.API;
