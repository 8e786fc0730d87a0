// Starts Swagger UI for the agentplane API reference. The spec URL comes from
// the body's data-spec-url attribute so the page needs no inline script and
// its Content-Security-Policy can stay at script-src 'self'.
(function () {
  "use strict";
  function start() {
    var specURL = document.body.getAttribute("data-spec-url");
    window.ui = SwaggerUIBundle({
      url: specURL,
      dom_id: "#swagger-ui",
      deepLinking: true,
      validatorUrl: null,
      tryItOutEnabled: true,
      presets: [SwaggerUIBundle.presets.apis],
      plugins: [SwaggerUIBundle.plugins.DownloadUrl],
      layout: "BaseLayout"
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
