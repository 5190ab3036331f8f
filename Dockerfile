# topoflow's image: both binaries (worker and starter) in one static, non-root, distroless image;
# a Deployment or compose service picks one with its command. One image keeps the two in step:
# they share the workflow definitions, and a worker and a starter of different builds should not
# meet on one task queue.
#
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t topoflow:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The image has no .git (.dockerignore): the revision comes as a build argument (buildinfo).
ARG REVISION=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X github.com/topoflow/topoflow/cmd/internal/buildinfo.Revision=${REVISION}" -o /out/ ./cmd/worker ./cmd/starter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /out/starter /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/worker"]
