# topoflow's image: both binaries (worker and starter) in one static, non-root, distroless image;
# a Deployment or compose service picks one with its command. One image keeps the two in step:
# they share the workflow definitions, and a worker and a starter of different builds should not
# meet on one task queue.
#
#   docker build -t topoflow:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/worker ./cmd/starter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/worker /out/starter /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/worker"]
