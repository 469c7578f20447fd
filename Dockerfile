# cronledger: one image for the api, worker and migrate services (see compose.yaml).
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    PATH="/opt/venv/bin:$PATH"

RUN pip install --no-cache-dir uv

WORKDIR /app
# Dependencies first (cached layer), then the project itself.
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY alembic.ini ./
COPY core ./core
COPY api ./api
COPY migrations ./migrations
RUN uv sync --frozen --no-dev

RUN useradd --system --uid 10001 --home-dir /app cronledger
USER cronledger

ENV CRONLEDGER_HOST=0.0.0.0 CRONLEDGER_PORT=8000
EXPOSE 8000
# `serve` (the default command) and `worker` keep a heartbeat file fresh while every background
# loop runs and the database answers; `cronledger health` exits 0 only while it is fresh
# (docs/operations.md, "Health checks"). compose.yaml gives the api service an HTTP check.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["cronledger", "health"]
ENTRYPOINT ["cronledger"]
CMD ["serve"]
